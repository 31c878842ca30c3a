// Modify methods that answer with entities (the demo's answer with nothing or a number), for the
// tests that a method's reply options are bound before it changes anything; and shelves holding
// tallies through an optional reference, for the $ref tests that remove a link.
import { entity, method, p, plugin } from 'entityctl/plugin'

const Tally = entity('Tally', {
  properties: { Count: p.integer().required(), Label: p.text(), Shelf: p.reference('Shelf') },
  methods: {
    Bump: method.modify('Adds one and answers with the tally', { returns: p.reference('Tally') }, (tally) => {
      tally.Count = tally.Count + 1
      return tally
    }),
    BumpAll: method.modify('Adds one to every tally and answers with them', { static: true, returns: p.many('Tally') }, async (_input, { find }) => {
      const tallies = await find('Tally')
      for (const tally of tallies) tally.Count = tally.Count + 1
      return tallies
    }),
  },
})

const Shelf = entity('Shelf', {
  properties: { Name: p.text(), Tallies: p.many('Tally').via('Shelf') },
})

export default plugin({ entities: [Tally, Shelf] })
