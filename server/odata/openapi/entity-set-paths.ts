// One entity set → its paths: the collection (read with the query options, create), its
// $count, one entity by key (read, update, replace, delete with If-Match), and the reads
// through each navigation property. The methods the routes allow (odata-routes.ts):
//
//   /Orders                    GET POST         /Orders({Guid})              GET PATCH PUT DELETE
//   /Orders/$count             GET              /Orders({Guid})/Customer     GET
//   /Orders({Guid})/Lines      GET              /Orders({Guid})/Lines/$count GET
//
// A collection read lists $search only where the set's Capabilities.SearchRestrictions in the
// CSDL say it is searchable, and a set lists create, update and delete only where its Insert-,
// Update- and DeleteRestrictions allow them, as $metadata tells UI5 and Fiori clients.

import type { CsdlEntitySet, CsdlEntityType } from '../metadata/csdl.ts'
import {
  COLLECTION_OPTIONS,
  ENTITY_OPTIONS,
  IF_MATCH,
  json,
  jsonBody,
  NO_CONTENT,
  queryOptions,
  responses,
  type PathItem,
} from './common.ts'
import { collectionSchema, localName, schemaRef } from './json-schemas.ts'

const WRITE_ERRORS = ['400', '401', '403', '404', '409', '412']

const COUNT = { description: 'The number of matching entities', content: { 'text/plain': { schema: { type: 'integer', minimum: 0 } } } }

export function keyParameter(type: CsdlEntityType): Record<string, unknown> {
  const key = type.key[0]
  return { name: key, in: 'path', required: true, description: `The ${key} of the ${type.name}`, schema: { type: 'string', format: 'uuid' } }
}

/** `/Orders({Guid})`: the path of one entity; the parameter is named after the key property. */
export function entityPath(set: CsdlEntitySet, type: CsdlEntityType): string {
  return `/${set.name}({${type.key[0]}})`
}

/** `setOf`: the entity set of an entity type (qualified name), for the reads through a navigation. */
export function entitySetPaths(set: CsdlEntitySet, type: CsdlEntityType, setOf: (entityType: string) => CsdlEntitySet | undefined): Record<string, PathItem> {
  const tags = [set.name]
  const entity = schemaRef(type.name)
  const key = keyParameter(type)
  const one = entityPath(set, type)
  const paths: Record<string, PathItem> = {
    [`/${set.name}`]: {
      get: {
        tags,
        summary: `Read ${set.name}`,
        operationId: `${set.name}.list`,
        parameters: queryOptions(collectionOptions(set)),
        responses: responses({ '200': json(`A page of ${set.name}`, collectionSchema(entity)) }),
      },
      post: {
        tags,
        summary: `Create one of ${set.name}`,
        operationId: `${set.name}.create`,
        parameters: queryOptions(ENTITY_OPTIONS),
        requestBody: jsonBody(entity),
        responses: responses(
          { '200': json('The created entity', entity), '204': { description: 'Created, with Prefer: return=minimal; OData-EntityId says where' } },
          ['400', '401', '403', '404', '409'],
        ),
      },
    },
    [`/${set.name}/$count`]: {
      get: {
        tags,
        summary: `Count ${set.name}`,
        operationId: `${set.name}.count`,
        parameters: queryOptions(['filter']),
        responses: responses({ '200': COUNT }),
      },
    },
    [one]: {
      parameters: [key],
      get: {
        tags,
        summary: `Read one of ${set.name}`,
        operationId: `${set.name}.get`,
        parameters: queryOptions(ENTITY_OPTIONS),
        responses: responses({ '200': json(`The ${type.name}`, entity) }),
      },
      patch: {
        tags,
        summary: `Update one of ${set.name}: only the properties given`,
        operationId: `${set.name}.update`,
        parameters: [IF_MATCH, ...queryOptions(ENTITY_OPTIONS)],
        requestBody: jsonBody(entity),
        responses: responses({ '200': json('The updated entity', entity), '204': NO_CONTENT }, WRITE_ERRORS),
      },
      put: {
        tags,
        summary: `Replace one of ${set.name}: properties not given are reset`,
        operationId: `${set.name}.replace`,
        parameters: [IF_MATCH, ...queryOptions(ENTITY_OPTIONS)],
        requestBody: jsonBody(entity),
        responses: responses({ '200': json('The replaced entity', entity), '204': NO_CONTENT }, WRITE_ERRORS),
      },
      delete: {
        tags,
        summary: `Delete one of ${set.name}`,
        operationId: `${set.name}.delete`,
        parameters: [IF_MATCH],
        responses: responses({ '204': NO_CONTENT }, WRITE_ERRORS),
      },
    },
  }
  if (!allowed(set, 'InsertRestrictions', 'Insertable')) delete paths[`/${set.name}`].post
  if (!allowed(set, 'UpdateRestrictions', 'Updatable')) {
    delete paths[one].patch
    delete paths[one].put
  }
  if (!allowed(set, 'DeleteRestrictions', 'Deletable')) delete paths[one].delete
  for (const navigation of type.navigationProperties) {
    const targetSchema = schemaRef(localName(navigation.type))
    const path = `${one}/${navigation.name}`
    paths[path] = {
      parameters: [key],
      get: {
        tags,
        summary: `Read the ${navigation.name} of one of ${set.name}`,
        operationId: `${set.name}.${navigation.name}.get`,
        parameters: queryOptions(navigation.collection ? collectionOptions(setOf(navigation.type)) : ENTITY_OPTIONS),
        responses: responses({ '200': json(`The ${navigation.name}`, navigation.collection ? collectionSchema(targetSchema) : targetSchema), '204': NO_CONTENT }),
      },
    }
    if (navigation.collection) {
      paths[`${path}/$count`] = {
        parameters: [key],
        get: {
          tags,
          summary: `Count the ${navigation.name} of one of ${set.name}`,
          operationId: `${set.name}.${navigation.name}.count`,
          parameters: queryOptions(['filter']),
          responses: responses({ '200': COUNT }),
        },
      }
    }
  }
  return paths
}

/** The query options of a collection read of `set`: all of them, but $search where the set is not searchable. */
function collectionOptions(set: CsdlEntitySet | undefined): readonly string[] {
  return set && !searchable(set) ? COLLECTION_OPTIONS.filter((name) => name !== 'search') : COLLECTION_OPTIONS
}

/** Capabilities.SearchRestrictions/Searchable of the set; true without it, as the vocabulary's default says. */
function searchable(set: CsdlEntitySet): boolean {
  return allowed(set, 'SearchRestrictions', 'Searchable')
}

/** A flag of the set's Capabilities restrictions (`InsertRestrictions/Insertable`); true without it, the vocabulary's default. */
function allowed(set: CsdlEntitySet, restrictions: string, flag: string): boolean {
  const record = set.annotations.find((annotation) => annotation.term === `Capabilities.${restrictions}`)?.value
  const value = record?.kind === 'Record' ? record.properties[flag] : undefined
  return value?.kind !== 'Bool' || value.value
}
