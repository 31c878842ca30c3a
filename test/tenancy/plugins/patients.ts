// A model with encrypted properties, for the encryption tests.
import { entity, p, plugin } from 'entityctl/plugin'

const Patient = entity('Patient', {
  properties: {
    Name: p.properNoun().required().maxLength(100),
    Diagnosis: p.multilineText().encrypted().maxLength(200),
    BirthDate: p.date().encrypted(),
    Visits: p.integer().encrypted(),
    Summary: p.text().virtual(),
  },
  computed: {
    Title: { from: ['Name'], value: (patient) => patient.Name },
    Summary: { from: ['Name', 'Diagnosis'], value: (patient) => `${patient.Name}: ${patient.Diagnosis ?? 'no diagnosis'}` },
  },
})

export default plugin({ entities: [Patient] })
