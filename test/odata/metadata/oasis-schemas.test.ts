// $metadata against the official OASIS schemas: edmx.xsd/edm.xsd for XML, csdl.schema.json
// for JSON. The negative cases prove the validators really validate.

import { beforeAll, describe, expect, it } from 'vitest'
import type { Model } from '../../../server/model/model.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { buildCsdl } from '../../../server/odata/metadata/build-csdl.ts'
import type { CsdlVersion } from '../../../server/odata/metadata/csdl.ts'
import { writeCsdlJson } from '../../../server/odata/metadata/write-csdl-json.ts'
import { writeCsdlXml } from '../../../server/odata/metadata/write-csdl-xml.ts'
import { demoModel } from './demo-model.ts'
import { fixtureModel } from './fixture-model.ts'
import { jsonSchemaErrors, xsdErrors } from './oasis-validators.ts'

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
