import { describe, expect, it } from 'vitest'
import { namingPolicy } from '../../../server/model/naming.ts'
import { metadataDocument, type MetadataSource } from '../../../server/odata/metadata/metadata-document.ts'
import { demoModel } from './demo-model.ts'

const source = async (lowerCamelCase: boolean): Promise<MetadataSource> => ({
  model: await demoModel(),
  naming: namingPolicy(lowerCamelCase),
  config: { ApiOptions: { MaxExpansionDepth: 3 } },
})

describe('metadataDocument', () => {
  it('prints XML (version 4.01 unless told) and JSON as a string body', async () => {
    const services = await source(false)
    expect(metadataDocument(services, 'xml')).toContain('<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.01">')
    const json = JSON.parse(metadataDocument(services, 'json'))
    expect(json.$Version).toBe('4.01')
    expect(json.entityctl.Container.Orders['@Capabilities.ExpandRestrictions']).toEqual({ MaxLevels: 3 })
  })

  it('prints the version the response speaks', async () => {
    expect(metadataDocument(await source(false), 'xml', '4.0')).toContain('Version="4.0">')
  })

  it('prints each variant once and keeps it', async () => {
    const services = await source(true)
    const first = metadataDocument(services, 'xml')
    expect(metadataDocument({ ...services }, 'xml')).toBe(first)
    expect(first).toContain('<Property Name="customerGuid"')
    expect(metadataDocument(await source(false), 'xml')).not.toBe(first)
  })
})
