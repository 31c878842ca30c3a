// The CSDL of the service (build-csdl.ts, the input of $metadata too) → an OpenAPI 3.1
// document: paths for every entity set, navigation and method, the system routes, a schema
// per entity and enumeration type, and the two ways to authenticate. Built from the same
// data as $metadata, so the two cannot name different sets, properties or methods.

import type { Csdl, CsdlEntityType } from '../metadata/csdl.ts'
import { componentParameters, componentResponses, type PathItem } from './common.ts'
import { entitySetPaths } from './entity-set-paths.ts'
import { entitySchema, enumSchema, ERROR_SCHEMA, errorSchema, type JsonSchema } from './json-schemas.ts'
import { operationPath } from './operation-paths.ts'
import { systemPaths } from './system-paths.ts'

export interface OpenApiOptions {
  /** info.version: the service's version (package.json). */
  readonly version: string
  /** servers[0].url: where the paths start. */
  readonly serverUrl?: string
}

export const BEARER = 'bearer'
export const PAT = 'pat'

export function buildOpenApi(csdl: Csdl, options: OpenApiOptions): Record<string, unknown> {
  const { schema } = csdl
  const entityTypes = new Map<string, CsdlEntityType>()
  const schemas: Record<string, JsonSchema> = {}
  for (const type of schema.types) {
    const qualified = `${schema.namespace}.${type.name}`
    if (type.kind === 'EntityType') {
      entityTypes.set(qualified, type)
      schemas[type.name] = entitySchema(type)
    } else {
      schemas[type.name] = enumSchema(type)
    }
  }
  schemas[ERROR_SCHEMA] = errorSchema()

  const paths: Record<string, PathItem> = {}
  const tags: { name: string; description?: string }[] = []
  const setsByType = new Map(schema.container.entitySets.map((set) => [set.entityType, set]))
  for (const set of schema.container.entitySets) {
    const type = entityTypes.get(set.entityType)!
    tags.push({ name: set.name, description: `Entity set of ${type.name}` })
    Object.assign(paths, entitySetPaths(set, type, (entityType) => setsByType.get(entityType)))
    for (const operation of schema.operations) {
      // Each entity type has one set; an operation bound to the type is reached through it.
      if (operation.parameters[0]?.type !== set.entityType) continue
      const [path, item] = operationPath(set, type, operation, (t) => entityTypes.has(t))
      paths[path] = item
    }
  }
  Object.assign(paths, systemPaths())

  return {
    openapi: '3.1.0',
    info: {
      title: 'entityctl OData service',
      version: options.version,
      description:
        'The OData v4 service generated from the entity plugins. Sign in with POST /auth/signin and send the access token as ' +
        '`Authorization: Bearer <token>`, or send a personal access token as Basic credentials with the user name `pat`. ' +
        'The CSDL at /$metadata describes the same model.',
    },
    servers: [{ url: options.serverUrl ?? '/api' }],
    security: [{ [BEARER]: [] }, { [PAT]: [] }],
    tags,
    paths,
    components: {
      schemas,
      parameters: componentParameters(),
      responses: componentResponses(),
      securitySchemes: {
        [BEARER]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The accessToken of POST /auth/signin' },
        [PAT]: { type: 'http', scheme: 'basic', description: 'A personal access token: user name `pat`, the token as the password' },
      },
    },
  }
}
