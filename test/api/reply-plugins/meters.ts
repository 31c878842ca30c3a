// Test plugin for the format of replies (reply-formats.test.ts): decimals stored and virtual,
// a virtual one computed from a stored one, samples to expand, and methods answering with one
// entity, with several, and with a decimal value.
import { entity, method, p, plugin, sum } from 'entityctl/plugin'

const Meter = entity('Meter', {
  properties: {
    Reading: p.decimal(12, 2),
    // Never stored: computed in Node after the read, from the reading the statement returns.
    Upper: p.decimal(12, 2).virtual(),
    // Wider than a JavaScript number keeps exactly: values past 15 significant digits are refused.
    Wide: p.decimal(18, 2),
    Samples: p.many('Sample').via('Meter'),
  },
  computed: { Upper: { from: ['Reading'], value: (meter) => (meter.Reading === null ? null : meter.Reading + 0.25) } },
  methods: {
    Reset: method.modify('Sets the reading to zero and answers with the meter', { returns: p.reference('Meter') }, (meter) => {
      meter.Reading = 0
      return meter
    }),
    ResetAll: method.modify('Sets every reading to zero and answers with the meters', { static: true, returns: p.many('Meter') }, async (_input, { find }) => {
      const meters = await find('Meter')
      for (const meter of meters) meter.Reading = 0
      return meters
    }),
    Total: method.read('The sum of the readings', { static: true, returns: p.decimal(14, 2) }, async (_input, { find }) => sum(await find('Meter'), (meter) => meter.Reading)),
  },
})

const Sample = entity('Sample', {
  properties: { Meter: p.reference('Meter').required().onDelete('cascade'), Value: p.decimal(12, 2) },
})

export default plugin({ entities: [Meter, Sample] })
