// Plugin methods → paths: a read method is a function (GET, its parameters in the query
// string), a modify method an action (POST, its parameters as a JSON object), called on the
// set (static) or on one entity (method-handler.ts):
//
//   /Orders/OpenSince?before=2026-01-01   GET     /Orders({Guid})/Close   POST {}
//
// The result: a collection page, an entity, or a primitive as { value }; nothing is 204.

import type { CsdlEntitySet, CsdlEntityType, CsdlOperation } from '../metadata/csdl.ts'
import { json, jsonBody, NO_CONTENT, responses, type Operation, type PathItem } from './common.ts'
import { entityPath, keyParameter } from './entity-set-paths.ts'
import { collectionSchema, itemSchema, valueSchema, type JsonSchema } from './json-schemas.ts'

/** `isEntityType`: whether a qualified type is an entity type (not an enumeration). */
export function operationPath(set: CsdlEntitySet, type: CsdlEntityType, operation: CsdlOperation, isEntityType: (qualified: string) => boolean): [string, PathItem] {
  const [binding, ...parameters] = operation.parameters
  const path = binding.collection ? `/${set.name}/${operation.name}` : `${entityPath(set, type)}/${operation.name}`
  const description = operation.annotations.find((a) => a.term === 'Core.Description')?.value
  const common: Operation = {
    tags: [set.name],
    summary: description?.kind === 'String' ? description.value : operation.name,
    operationId: `${set.name}.${operation.name}`,
    responses: responses(result(operation, isEntityType)),
  }
  const item: PathItem = binding.collection ? {} : { parameters: [keyParameter(type)] }
  if (operation.kind === 'Function') {
    item.get = {
      ...common,
      description: `Function ${operation.name}: its parameters go in the query string.`,
      parameters: parameters.map((p) => ({ name: p.name, in: 'query', required: !p.nullable, schema: valueSchema(p) })),
    }
  } else {
    const properties: Record<string, JsonSchema> = {}
    for (const p of parameters) properties[p.name] = valueSchema(p)
    const required = parameters.filter((p) => !p.nullable).map((p) => p.name)
    item.post = {
      ...common,
      description: `Action ${operation.name}: its parameters are the members of the JSON body.`,
      requestBody: jsonBody({ type: 'object', properties, ...(required.length > 0 && { required }) }, required.length > 0),
    }
  }
  return [path, item]
}

function result(operation: CsdlOperation, isEntityType: (qualified: string) => boolean): Record<string, unknown> {
  const returns = operation.returnType
  if (!returns) return { '204': NO_CONTENT }
  const item = itemSchema({ ...returns, nullable: false })
  const isEntity = isEntityType(returns.type)
  if (returns.collection) return { '200': json('The result', isEntity ? collectionSchema(item) : { type: 'object', properties: { value: valueSchema(returns) } }), '204': NO_CONTENT }
  if (isEntity) return { '200': json('The result', item), '204': NO_CONTENT }
  return { '200': json('The result', { type: 'object', properties: { '@odata.context': { type: 'string' }, value: itemSchema(returns) } }), '204': NO_CONTENT }
}
