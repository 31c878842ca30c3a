// Plugin methods → paths: a read method is a function (GET, its parameters in the query
// string), a modify method an action (POST, its parameters as a JSON object), called on the
// set (static) or on one entity (method-handler.ts):
//
//   /Orders/OpenSince?before=2026-01-01   GET     /Orders({Guid})/Close   POST {}
//
// The result: a collection page, an entity, or a primitive as { value }; nothing is 204.
//
// An entity-typed parameter takes what bind-parameters.ts accepts: the entity with its key, a
// reference `{"@odata.id": …}` or the Guid, in the body also as `<name>@odata.bind`; in a
// function's query string the Guid or that JSON.

import type { CsdlEntitySet, CsdlEntityType, CsdlOperation, CsdlParameter } from '../metadata/csdl.ts'
import { json, jsonBody, NO_CONTENT, responses, type Operation, type PathItem } from './common.ts'
import { entityPath, keyParameter } from './entity-set-paths.ts'
import { collectionSchema, itemSchema, localName, schemaRef, valueSchema, type JsonSchema } from './json-schemas.ts'

const BIND = '@odata.bind'

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
      parameters: parameters.map((p) => ({ name: p.name, in: 'query', required: isRequired(p), schema: isEntityType(p.type) ? entityQuerySchema(p) : valueSchema(p) })),
    }
  } else {
    const properties: Record<string, JsonSchema> = {}
    const required: string[] = []
    // A required entity parameter is given as itself or as its @odata.bind: one of the two.
    const givenOnce: JsonSchema[] = []
    for (const p of parameters) {
      if (!isEntityType(p.type)) {
        properties[p.name] = valueSchema(p)
        if (isRequired(p)) required.push(p.name)
        continue
      }
      properties[p.name] = p.collection ? { type: 'array', items: entityArgumentSchema(p.type) } : entityArgumentSchema(p.type)
      properties[`${p.name}${BIND}`] = p.collection ? { type: 'array', items: { type: 'string' } } : { type: 'string' }
      if (isRequired(p)) givenOnce.push({ oneOf: [{ required: [p.name] }, { required: [`${p.name}${BIND}`] }] })
    }
    const needsBody = required.length > 0 || givenOnce.length > 0
    const schema: JsonSchema = {
      type: 'object',
      properties,
      ...(required.length > 0 && { required }),
      ...(givenOnce.length > 0 && { allOf: givenOnce }),
    }
    item.post = {
      ...common,
      description: `Action ${operation.name}: its parameters are the members of the JSON body.`,
      requestBody: jsonBody(schema, needsBody),
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

/**
 * Whether a call must give the parameter: not one $metadata marks Core.OptionalParameter (it
 * has a default, or is a collection a call may leave out), whatever its nullability says.
 */
function isRequired(parameter: CsdlParameter): boolean {
  return !parameter.nullable && !parameter.annotations.some((a) => a.term === 'Core.OptionalParameter')
}

/** One entity a parameter names: the entity with its key, a reference, or its Guid. */
function entityArgumentSchema(type: string): JsonSchema {
  const reference = { type: 'object', properties: { '@odata.id': { type: 'string' } }, required: ['@odata.id'] }
  return { anyOf: [schemaRef(localName(type)), reference, { type: 'string', format: 'uuid' }] }
}

/** An entity parameter of a function, in the query string: the Guid, or the JSON of the body's forms. */
function entityQuerySchema(parameter: CsdlParameter): JsonSchema {
  const entity = localName(parameter.type)
  const description = parameter.collection
    ? `A JSON array naming ${entity} entities: each the entity with its key, {"@odata.id": …} or its key.`
    : `The ${entity}'s key, or as JSON the entity with its key or {"@odata.id": …}.`
  return { type: 'string', description }
}
