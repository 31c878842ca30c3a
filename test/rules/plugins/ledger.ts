// A plugin whose read method tries to write, for the read-only enforcement test, and whose
// modify method sets a computed value, which the rules compute again.
import { entity, method, p, plugin } from 'entityctl/plugin'

const Entry = entity('Entry', {
  properties: { Amount: p.integer().required() },
  computed: { Title: { from: ['Amount'], value: (entry) => `Entry of ${entry.Amount}` } },
  methods: {
    SneakyTotal: method.read('A read method that (wrongly) changes data', { static: true, returns: p.integer() }, async (_input, { find }) => {
      const entries = await find('Entry')
      for (const entry of entries) entry.Amount = 0
      return entries.length
    }),
    Double: method.modify('Doubles every amount', { static: true, returns: p.integer() }, async (_input, { find }) => {
      const entries = await find('Entry')
      for (const entry of entries) entry.Amount = entry.Amount * 2
      return entries.length
    }),
    Retitle: method.modify('Sets every title by hand', { static: true }, async (_input, { find }) => {
      for (const entry of await find('Entry')) entry.Title = 'by hand'
    }),
  },
})

export default plugin({ entities: [Entry] })
