// Modify methods that answer with entities (the demo's answer with nothing or a number), for the
// tests that a method's reply options are bound before it changes anything.
import { entity, method, p, plugin } from 'entityctl/plugin'

const Tally = entity('Tally', {
  properties: { Count: p.integer().required(), Label: p.text() },
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

export default plugin({ entities: [Tally] })
