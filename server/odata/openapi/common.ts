// What the path builders share: reusable parameters and responses under components, and the
// shapes of an OpenAPI operation. Every name a path refers to is defined once here.

import { ERROR_SCHEMA, schemaRef, type JsonSchema } from './json-schemas.ts'

export type Operation = Record<string, unknown>
export type PathItem = Record<string, unknown>

const ref = (section: string, name: string) => ({ $ref: `#/components/${section}/${name}` })

/** The system query options of a collection read, as components/parameters. */
export const QUERY_OPTIONS: Readonly<Record<string, { readonly description: string; readonly schema: JsonSchema }>> = {
  filter: { description: "Only the entities for which this is true: `Name eq 'Acme' and Country eq 'DE'`", schema: { type: 'string' } },
  orderby: { description: 'Order by these properties: `Name desc,Guid`', schema: { type: 'string' } },
  select: { description: 'These properties: `Name,Country`, or `*` for all; without $select, what ApiOptions:DefaultSelect says (the key alone by default)', schema: { type: 'string' } },
  expand: { description: 'With these related entities: `Orders($top=5)`', schema: { type: 'string' } },
  top: { description: 'At most this many entities', schema: { type: 'integer', minimum: 0 } },
  skip: { description: 'Skip this many entities', schema: { type: 'integer', minimum: 0 } },
  count: { description: 'Include @odata.count, the number of matching entities', schema: { type: 'boolean' } },
  apply: { description: 'Aggregate: `groupby((Country),aggregate($count as Customers))`', schema: { type: 'string' } },
  compute: { description: 'Computed values, usable in $select, $filter and $orderby: `Total mul 2 as Double`', schema: { type: 'string' } },
  search: { description: 'Full-text search in the searchable properties: `tea OR "earl grey"`; 400 on a set without searchable properties', schema: { type: 'string' } },
}

export const COLLECTION_OPTIONS = Object.keys(QUERY_OPTIONS)
/** What a read of one entity takes. */
export const ENTITY_OPTIONS = ['select', 'expand']

export function queryOptions(names: readonly string[]): unknown[] {
  return names.map((name) => ref('parameters', name))
}

export const IF_MATCH = ref('parameters', 'If-Match')

export function componentParameters(): Record<string, unknown> {
  const parameters: Record<string, unknown> = {}
  for (const [name, { description, schema }] of Object.entries(QUERY_OPTIONS)) {
    parameters[name] = { name: `$${name}`, in: 'query', required: false, description, schema }
  }
  parameters['If-Match'] = {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: "The entity's @odata.etag: the write is refused (412) if the entity changed since",
    schema: { type: 'string' },
  }
  return parameters
}

/** The error answers every operation can give, by status. */
const ERRORS: Readonly<Record<string, string>> = {
  '400': 'The request is malformed or its values are invalid',
  '401': 'Credentials are missing or invalid',
  '403': 'The credentials lack a permission the request needs',
  '404': 'No such resource',
  '409': 'The request conflicts with the data: a unique value taken, an entity still referenced, a workflow index out of turn',
  '412': "The entity changed since the @odata.etag given in If-Match",
}

export function componentResponses(): Record<string, unknown> {
  const responses: Record<string, unknown> = {}
  for (const [status, description] of Object.entries(ERRORS)) {
    responses[`Error${status}`] = { description, content: { 'application/json': { schema: schemaRef(ERROR_SCHEMA) } } }
  }
  responses.Error = { description: 'An error', content: { 'application/json': { schema: schemaRef(ERROR_SCHEMA) } } }
  return responses
}

/** The success answers, then the errors; `open` routes (sign-in) cannot answer 401/403 for lacking credentials. */
export function responses(success: Record<string, unknown>, statuses: readonly string[] = ['400', '401', '403', '404']): Record<string, unknown> {
  const all: Record<string, unknown> = { ...success }
  for (const status of statuses) all[status] = ref('responses', `Error${status}`)
  all.default = ref('responses', 'Error')
  return all
}

export function json(description: string, schema: JsonSchema): Record<string, unknown> {
  return { description, content: { 'application/json': { schema } } }
}

export function jsonBody(schema: JsonSchema, required = true): Record<string, unknown> {
  return { required, content: { 'application/json': { schema } } }
}

export const NO_CONTENT = { description: 'Done; nothing to return' }
