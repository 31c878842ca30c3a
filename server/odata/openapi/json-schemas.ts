// CSDL types → the JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses) of the OpenAPI document:
// one per entity type and enumeration type under components/schemas, and the OData error
// body. The same CSDL (build-csdl.ts) feeds $metadata, so both describe one service.
//
//   Edm.Decimal Precision=12 Scale=2  →  { type: ['number', 'string'], format: 'decimal' }
//   entityctl.OrderStatus             →  { $ref: '#/components/schemas/OrderStatus' }

import type { CsdlEntityType, CsdlEnumType, CsdlTypeRef } from '../metadata/csdl.ts'

export type JsonSchema = Record<string, unknown>

/** The JSON form of each EDM primitive type the metadata uses (edm-types.ts). */
const PRIMITIVES: Readonly<Record<string, JsonSchema>> = {
  'Edm.String': { type: 'string' },
  'Edm.Int32': { type: 'integer', format: 'int32' },
  'Edm.Int64': { type: 'integer', format: 'int64' },
  // OData JSON writes decimals as numbers, or as strings under IEEE754Compatible=true.
  'Edm.Decimal': { type: ['number', 'string'], format: 'decimal' },
  'Edm.Double': { type: 'number', format: 'double' },
  'Edm.Boolean': { type: 'boolean' },
  'Edm.Date': { type: 'string', format: 'date' },
  'Edm.DateTimeOffset': { type: 'string', format: 'date-time' },
  'Edm.TimeOfDay': { type: 'string', format: 'time' },
  'Edm.Guid': { type: 'string', format: 'uuid' },
}

export const ERROR_SCHEMA = 'ODataError'

export function schemaRef(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` }
}

/** `entityctl.Order` → `Order`: components/schemas names are unqualified. */
export function localName(qualifiedName: string): string {
  return qualifiedName.slice(qualifiedName.lastIndexOf('.') + 1)
}

/** The schema of one value (not a collection) of this type, null included when nullable. */
export function itemSchema(ref: CsdlTypeRef): JsonSchema {
  const primitive = PRIMITIVES[ref.type]
  let schema: JsonSchema
  if (primitive) {
    schema = { ...primitive }
    if (ref.maxLength !== undefined) schema.maxLength = ref.maxLength
  } else {
    schema = schemaRef(localName(ref.type))
  }
  if (!ref.nullable) return schema
  if (!primitive) return { anyOf: [schema, { type: 'null' }] }
  const type = schema.type
  return { ...schema, type: [...(Array.isArray(type) ? type : [type]), 'null'] }
}

/** A property, parameter or return value: an array of items for a collection. */
export function valueSchema(ref: CsdlTypeRef): JsonSchema {
  return ref.collection ? { type: 'array', items: itemSchema({ ...ref, nullable: false }) } : itemSchema(ref)
}

export function enumSchema(type: CsdlEnumType): JsonSchema {
  return { type: 'string', enum: type.members.map((member) => member.name) }
}

/** An entity as the service reads and writes it; navigation properties appear when expanded. */
export function entitySchema(type: CsdlEntityType): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const property of type.properties) properties[property.name] = valueSchema(property)
  for (const navigation of type.navigationProperties) {
    const target = schemaRef(localName(navigation.type))
    properties[navigation.name] = navigation.collection
      ? { type: 'array', items: target, description: 'With $expand' }
      : { ...(navigation.nullable === false ? target : { anyOf: [target, { type: 'null' }] }), description: 'With $expand' }
  }
  const description = type.annotations.find((a) => a.term === 'Core.Description')?.value
  return {
    type: 'object',
    ...(description?.kind === 'String' && { description: description.value }),
    properties: { '@odata.etag': { type: 'string', readOnly: true }, ...properties },
  }
}

/** A page of a collection: `value` and the control information around it. */
export function collectionSchema(items: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      '@odata.context': { type: 'string' },
      '@odata.count': { type: 'integer', description: 'With $count=true' },
      '@odata.nextLink': { type: 'string', description: 'The next page, when there is one' },
      value: { type: 'array', items },
    },
    required: ['value'],
  }
}

/** The OData JSON error body every 4xx and 5xx carries (server/errors.ts). */
export function errorSchema(): JsonSchema {
  const detail = {
    type: 'object',
    properties: { code: { type: 'string' }, message: { type: 'string' }, target: { type: 'string' } },
    required: ['code', 'message'],
  }
  return {
    type: 'object',
    properties: {
      error: {
        type: 'object',
        properties: { ...detail.properties, details: { type: 'array', items: detail } },
        required: ['code', 'message'],
      },
    },
    required: ['error'],
  }
}
