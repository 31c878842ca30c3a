// Methods with every kind of parameter and result that a plain scalar body does not cover:
// entity-typed parameters, dates returned as JS Dates, enumerations, doubles written in a URL.
import { entity, method, p, plugin } from 'entityctl/plugin'

const Crate = entity('Crate', {
  properties: {
    Code: p.text().required(),
    Items: p.many('Item').via('Crate'),
  },
  methods: {
    Pick: method.modify('Takes entity-typed parameters', {
      static: true,
      params: { target: p.reference('Item').required(), many: p.many('Item') },
      returns: p.text(),
    }, ({ target, many }) => JSON.stringify({ target, many })),
    Seen: method.read('Which items a function was given', {
      static: true,
      params: { target: p.reference('Item') },
      returns: p.text(),
    }, ({ target }) => String(target)),
    Moment: method.read('A date-time result, a JS Date', { static: true, returns: p.dateTime() }, () => new Date('2024-03-01T12:00:00Z')),
    Times: method.read('A required parameter with a default may be left out', {
      static: true,
      params: { n: { ...p.integer().required().decl, default: 7 } },
      returns: p.integer(),
    }, ({ n }) => n),
    Bump: method.modify('A required parameter with a default may be left out', {
      static: true,
      params: { n: { ...p.integer().required().decl, default: 7 }, by: p.integer().required() },
      returns: p.integer(),
    }, ({ n, by }) => n + by),
    Echo: method.read('Echoes its dates', {
      static: true,
      params: {
        day: { ...p.date().decl, default: new Date('2024-01-31T00:00:00Z') },
        when: { ...p.dateTime().decl, default: new Date('2024-01-31T10:00:00Z') },
      },
      returns: p.text(),
    }, (params) => JSON.stringify(params)),
    Verdict: method.read('An enumeration result', { static: true, returns: p.enumeration('Yes', 'No') }, () => 'Yes'),
    Day: method.read('A date result, a JS Date', { static: true, returns: p.date() }, () => new Date('2024-03-01T00:00:00Z')),
    Half: method.read('A double parameter and result', { static: true, params: { x: p.double().required() }, returns: p.double() }, ({ x }) => x / 2),
    Shout: method.read('A text parameter, which may be null', { static: true, params: { word: p.text() }, returns: p.text() }, ({ word }) =>
      word === null ? 'nothing' : String(word).toUpperCase(),
    ),
    Lend: method.read('Parameters with declared bounds and length, as $metadata publishes them', {
      static: true,
      params: { days: p.integer().required().min(1).max(30), note: p.text().maxLength(5), rate: p.decimal(4, 2).min(0.5) },
      returns: p.text(),
    }, (params) => JSON.stringify(params)),
    Twice: method.modify('A double parameter and result, from a body', { static: true, params: { x: p.double().required() }, returns: p.double() }, ({ x }) => x * 2),
  },
})

const Item = entity('Item', {
  properties: {
    Name: p.text().required(),
    Crate: p.reference('Crate'),
  },
})

export default plugin({
  entities: [Crate, Item],
  responsibilities: {
    // Calling the methods that name items, without reading items: method-values.test.ts.
    PickItems: { permissions: { Crate: ['execute:Pick', 'execute:Seen'] } },
    ReadItems: { permissions: { Item: ['read'] } },
  },
})
