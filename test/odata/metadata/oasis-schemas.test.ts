// $metadata against the official OASIS schemas: edmx.xsd/edm.xsd for XML, csdl.schema.json
// for JSON, and its annotations against the OASIS vocabularies (their terms, where they apply,
// the shapes of their values). The negative cases prove the validators really validate.

import { beforeAll, describe, expect, it } from 'vitest'
import type { Model } from '../../../server/model/model.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { buildCsdl } from '../../../server/odata/metadata/build-csdl.ts'
import type { Csdl, CsdlVersion } from '../../../server/odata/metadata/csdl.ts'
import { writeCsdlJson } from '../../../server/odata/metadata/write-csdl-json.ts'
import { writeCsdlXml } from '../../../server/odata/metadata/write-csdl-xml.ts'
import { demoModel } from './demo-model.ts'
import { fixtureModel } from './fixture-model.ts'
import { jsonSchemaErrors, vocabularyErrors, xsdErrors } from './oasis-validators.ts'

const CASES: [string, boolean, CsdlVersion][] = [
  ['Pascal case, 4.01', false, '4.01'],
  ['lower camel case, 4.01', true, '4.01'],
  ['Pascal case, 4.0', false, '4.0'],
]

let demo: Model
beforeAll(async () => {
  demo = await demoModel()
})

describe('CSDL XML against edmx.xsd and edm.xsd', () => {
  it.each(CASES)('accepts the demo model (%s)', async (_, lowerCamelCase, version) => {
    const csdl = buildCsdl(demo, namingPolicy(lowerCamelCase), { version, maxExpansionDepth: 5 })
    expect(await xsdErrors(writeCsdlXml(csdl))).toEqual([])
  })

  it('accepts the fixture model: enumerations, restrictions, optional parameters, escaped text', async () => {
    expect(await xsdErrors(writeCsdlXml(buildCsdl(fixtureModel(), namingPolicy(false))))).toEqual([])
  })

  it('rejects a document that breaks the schema', async () => {
    const xml = writeCsdlXml(buildCsdl(demo, namingPolicy(false)))
    const errors = await xsdErrors(xml.replace('<Key>', '<Keys>').replace('</Key>', '</Keys>'))
    expect(errors).toEqual([expect.stringContaining("Element '{http://docs.oasis-open.org/odata/ns/edm}Keys': This element is not expected")])
    expect(await xsdErrors(xml.replace('Nullable="false"', 'Nullable="no"'))).toEqual([expect.stringContaining("'no' is not a valid value")])
    expect(await xsdErrors(xml.replace('Version="4.01"', 'Version="4.1"'))).not.toEqual([])
    expect(await xsdErrors(xml.replace('<edmx:DataServices>', '<edmx:DataServices><Oops>'))).not.toEqual([])
  })
})

describe('CSDL JSON against csdl.schema.json', () => {
  it.each(CASES)('accepts the demo model (%s)', (_, lowerCamelCase, version) => {
    const csdl = buildCsdl(demo, namingPolicy(lowerCamelCase), { version, maxExpansionDepth: 5 })
    expect(jsonSchemaErrors(writeCsdlJson(csdl))).toEqual([])
  })

  it('accepts the fixture model', () => {
    expect(jsonSchemaErrors(writeCsdlJson(buildCsdl(fixtureModel(), namingPolicy(true))))).toEqual([])
  })

  it('rejects a document that breaks the schema', () => {
    const broken = structuredClone(writeCsdlJson(buildCsdl(demo, namingPolicy(false)))) as Record<string, any>
    broken.entityctl.Order.Number.$Nullable = 'false'
    broken.entityctl.Order.Lines.$OnDelete = 'Explode'
    broken.$Version = '5.0'
    expect(jsonSchemaErrors(broken)).toEqual(
      expect.arrayContaining([
        '/entityctl/Order/Number/$Nullable must be boolean',
        '/entityctl/Order/Lines/$OnDelete must be equal to one of the allowed values',
        '/$Version must be equal to one of the allowed values',
      ]),
    )
  })
})

describe('annotations against the OASIS vocabularies', () => {
  it.each(CASES)('the demo model uses their terms where they apply, with values of their types (%s)', (_, lowerCamelCase, version) => {
    expect(vocabularyErrors(buildCsdl(demo, namingPolicy(lowerCamelCase), { version, maxExpansionDepth: 5 }))).toEqual([])
  })

  it('the fixture model too', () => {
    expect(vocabularyErrors(buildCsdl(fixtureModel(), namingPolicy(false), { maxExpansionDepth: 5 }))).toEqual([])
  })

  it('rejects an unknown term, a term where it does not apply, and a value of another shape', () => {
    const csdl = buildCsdl(demo, namingPolicy(false))
    const [set] = csdl.schema.container.entitySets
    const withSetAnnotations = (annotations: Csdl['schema']['container']['entitySets'][number]['annotations']): Csdl => ({
      ...csdl,
      schema: { ...csdl.schema, container: { ...csdl.schema.container, entitySets: [{ ...set, annotations }] } },
    })
    expect(vocabularyErrors(withSetAnnotations([{ term: 'Capabilities.SearchRestriction', value: { kind: 'Bool', value: true } }]))).toEqual([
      `${set.name}: Capabilities.SearchRestriction is no term of the vocabularies`,
    ])
    expect(vocabularyErrors(withSetAnnotations([{ term: 'Core.Computed', value: { kind: 'Bool', value: true } }]))).toEqual([
      `${set.name}: Core.Computed applies to Property, not EntitySet`,
    ])
    const searchable = (properties: Record<string, { kind: 'Bool'; value: boolean } | { kind: 'String'; value: string }>) =>
      vocabularyErrors(withSetAnnotations([{ term: 'Capabilities.SearchRestrictions', value: { kind: 'Record', properties } }]))
    expect(searchable({ Searchable: { kind: 'String', value: 'false' } })).toEqual([`${set.name}/@Capabilities.SearchRestrictions/Searchable: a String where the vocabulary has Edm.Boolean`])
    expect(searchable({ Searchabel: { kind: 'Bool', value: false } })).toEqual([`${set.name}/@Capabilities.SearchRestrictions: Capabilities.SearchRestrictionsType has no property Searchabel`])
  })
})
