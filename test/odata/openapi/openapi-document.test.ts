// The OpenAPI document of the demo model: valid OpenAPI 3.1, and naming exactly what
// $metadata names (sets, properties, navigation properties, functions and actions), in both
// casings. The CSDL side is read from the CSDL JSON $metadata prints, not from buildCsdl().

import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadModel } from '../../../server/model/load-plugins.ts'
import { namingPolicy } from '../../../server/model/naming.ts'
import { metadataDocument, type MetadataSource } from '../../../server/odata/metadata/metadata-document.ts'
import { openApiDocument } from '../../../server/odata/openapi/openapi-document.ts'
import { demoModel } from '../metadata/demo-model.ts'
import { openApiErrors } from './openapi-validator.ts'

const source = async (lowerCamelCase: boolean): Promise<MetadataSource> => ({
  model: await demoModel(),
  naming: namingPolicy(lowerCamelCase),
  config: { ApiOptions: { MaxExpansionDepth: 3 } },
})

/** What a document publishes, as comparable sorted lists. */
interface Published {
  sets: string[]
  /** `Type.Property`, navigation properties included. */
  properties: string[]
  /** `Set/Name` for an operation bound to the set's collection, `Set(key)/Name` for one bound to an entity. */
  operations: string[]
}

function fromCsdl(csdl: Record<string, any>): Published {
  const schema = csdl.entityctl
  const sets: Record<string, string> = {}
  for (const [name, set] of Object.entries<any>(schema.Container)) if (!name.startsWith('$') && !name.startsWith('@')) sets[set.$Type] = name
  const properties: string[] = []
  const operations: string[] = []
  for (const [name, element] of Object.entries<any>(schema)) {
    if (element?.$Kind === 'EntityType') {
      for (const member of Object.keys(element)) if (!member.startsWith('$') && !member.includes('@')) properties.push(`${name}.${member}`)
    } else if (Array.isArray(element)) {
      for (const overload of element) {
        const binding = overload.$Parameter[0]
        operations.push(`${sets[binding.$Type]}${binding.$Collection ? '' : '(key)'}/${name}`)
      }
    }
  }
  return { sets: Object.values(sets).sort(), properties: properties.sort(), operations: operations.sort() }
}

function fromOpenApi(document: Record<string, any>): Published {
  const properties: string[] = []
  for (const [name, schema] of Object.entries<any>(document.components.schemas)) {
    if (schema.type !== 'object' || name === 'ODataError') continue
    for (const member of Object.keys(schema.properties)) if (!member.startsWith('@')) properties.push(`${name}.${member}`)
  }
  // An entity set is a path whose GET answers a page of entities (system routes answer other shapes).
  const sets = Object.keys(document.paths)
    .filter((path) => document.paths[path].get?.responses['200'].content?.['application/json']?.schema.properties?.value?.items?.$ref)
    .map((path) => path.slice(1))
    .filter((set) => !set.includes('/') && !set.includes('('))
  const operations: string[] = []
  for (const path of Object.keys(document.paths)) {
    const match = /^\/([^/({]+)(\(\{[^}]+\}\))?(?:\/([^/]+))?(\/\$count)?$/.exec(path)
    if (!match || !sets.includes(match[1])) continue
    const [, set, key, member, count] = match
    if (!member || member === '$count' || count) continue
    const type = document.paths[`/${set}`].get.responses['200'].content['application/json'].schema.properties.value.items.$ref.split('/').pop()
    if (key && document.components.schemas[type].properties[member]) continue // a navigation property
    operations.push(`${set}${key ? '(key)' : ''}/${member}`)
  }
  return { sets: sets.sort(), properties: properties.sort(), operations: operations.sort() }
}

describe.each([false, true])('the OpenAPI document (lower camel case: %s)', (lowerCamelCase) => {
  it('is valid against the OpenAPI 3.1 schema, and every $ref resolves', async () => {
    const document = JSON.parse(openApiDocument(await source(lowerCamelCase)))
    expect(document.openapi).toBe('3.1.0')
    expect(openApiErrors(document)).toEqual([])
  })

  it('names the sets, properties and methods $metadata names, and no others', async () => {
    const services = await source(lowerCamelCase)
    const csdl = fromCsdl(JSON.parse(metadataDocument(services, 'json')))
    const openApi = fromOpenApi(JSON.parse(openApiDocument(services)))
    expect(csdl.sets).toContain('Customers')
    expect(csdl.operations).toContain('Orders/OpenSince'.replace('OpenSince', lowerCamelCase ? 'openSince' : 'OpenSince'))
    expect(openApi).toEqual(csdl)
  })
})

describe('the OpenAPI document', () => {
  it('gives each entity set its query options, key, If-Match, methods and both credentials', async () => {
    const document = JSON.parse(openApiDocument(await source(false)))
    const parameterNames = (refs: { $ref: string }[]) => refs.map((p) => document.components.parameters[p.$ref.split('/').pop()!].name)
    expect(parameterNames(document.paths['/Customers'].get.parameters)).toEqual(['$filter', '$orderby', '$select', '$expand', '$top', '$skip', '$count', '$apply', '$compute', '$search'])
    // $search only where $metadata's SearchRestrictions say it works: not on Orders, whose plugin marks no property searchable.
    expect(parameterNames(document.paths['/Orders'].get.parameters)).not.toContain('$search')
    expect(parameterNames(document.paths['/Customers({Guid})/Orders'].get.parameters)).not.toContain('$search')
    expect(parameterNames(document.paths['/Orders({Guid})/Lines'].get.parameters)).not.toContain('$search')
    expect(parameterNames(document.paths['/Products'].get.parameters)).toContain('$search')
    expect(document.paths['/Customers'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Customer' })
    const one = document.paths['/Customers({Guid})']
    expect(Object.keys(one).sort()).toEqual(['delete', 'get', 'parameters', 'patch', 'put'])
    expect(parameterNames(one.delete.parameters)).toEqual(['If-Match'])
    expect(document.paths['/Orders({Guid})/Lines/$count'].get).toBeDefined()
    expect(document.paths['/Orders/OpenSince'].get.parameters).toEqual([{ name: 'before', in: 'query', required: true, schema: { type: 'string', format: 'date' } }])
    expect(document.paths['/Products/Reprice'].post.requestBody.content['application/json'].schema.required).toEqual(['category', 'percent'])
    expect(document.components.schemas.Product.properties.Price).toEqual({ type: ['number', 'string'], format: 'decimal' })
    expect(document.components.securitySchemes).toMatchObject({ bearer: { type: 'http', scheme: 'bearer' }, pat: { type: 'http', scheme: 'basic' } })
    expect(document.paths['/auth/signin'].post.security).toEqual([])
    for (const path of ['/auth/refresh', '/user/pats', '/user/pats/{id}/revoke', '/roles/tree', '/workflow', '/workflow/commit', '/workflow/abort', '/$metadata']) {
      expect(document.paths[path], path).toBeDefined()
    }
  })
})

describe('a set clients only read', () => {
  it('lists no create, update or delete for Responsibilities, as $metadata says and the API answers (405)', async () => {
    const document = JSON.parse(openApiDocument(await source(false)))
    expect(Object.keys(document.paths['/Responsibilities']).sort()).toEqual(['get'])
    expect(Object.keys(document.paths['/Responsibilities({Guid})']).sort()).toEqual(['get', 'parameters'])
    expect(Object.keys(document.paths['/RoleResponsibilities']).sort()).toEqual(['get', 'post'])
  })
})

describe('entity-typed method parameters', () => {
  it('take in the document the forms the service accepts: the entity with its key, a reference, the Guid, @odata.bind', async () => {
    const model = await loadModel(fileURLToPath(new URL('../../rules/method-plugins', import.meta.url)))
    const document = JSON.parse(openApiDocument({ model, naming: namingPolicy(false), config: { ApiOptions: { MaxExpansionDepth: 3 } } }))
    expect(await openApiErrors(document)).toEqual([])
    const one = { anyOf: [{ $ref: '#/components/schemas/Item' }, { type: 'object', properties: { '@odata.id': { type: 'string' } }, required: ['@odata.id'] }, { type: 'string', format: 'uuid' }] }
    const body = document.paths['/Crates/Pick'].post.requestBody.content['application/json'].schema
    expect(body.properties).toEqual({
      target: one,
      'target@odata.bind': { type: 'string' },
      many: { type: 'array', items: one },
      'many@odata.bind': { type: 'array', items: { type: 'string' } },
    })
    expect(body.required).toBeUndefined()
    expect(body.allOf).toEqual([{ oneOf: [{ required: ['target'] }, { required: ['target@odata.bind'] }] }])
    const [target] = document.paths['/Crates/Seen'].get.parameters
    expect(target).toMatchObject({ name: 'target', in: 'query', required: false, schema: { type: 'string' } })
  })
})

describe('optional method parameters (Core.OptionalParameter)', () => {
  it('are not required: a required one with a default, an entity collection', async () => {
    const model = await loadModel(fileURLToPath(new URL('../../rules/method-plugins', import.meta.url)))
    const document = JSON.parse(openApiDocument({ model, naming: namingPolicy(false), config: { ApiOptions: { MaxExpansionDepth: 3 } } }))
    expect(document.paths['/Crates/Times'].get.parameters).toEqual([{ name: 'n', in: 'query', required: false, schema: { type: 'integer', format: 'int32' } }])
    expect(document.paths['/Crates/Bump'].post.requestBody.content['application/json'].schema.required).toEqual(['by'])
    expect(document.paths['/Crates/Pick'].post.requestBody.content['application/json'].schema.allOf).toHaveLength(1)
  })
})
