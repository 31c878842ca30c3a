// The control information of an entity's JSON object (OData JSON 4.01 §4.5), as SQL members:
// what opens it (in full metadata its type, id and edit link, then its etag unless the metadata
// is none, then in full metadata its instance methods) and, in full metadata, each navigation's
// link. An entity read (compile-read.ts) and the rows of an $apply that are still entities
// (compile-apply.ts: filter, search, compute alone) write the same, so a client reads them alike.
// Links are relative to the context URL's service root.

import type { EntityModel } from '../../model/model.ts'
import { entityTagSql } from '../../persistence/entity-tag.ts'
import { toJson, type JsonMember } from './json-rows.ts'
import { modelString, type JsonOutput } from './sql-builder.ts'

/**
 * The members an entity's object opens with: `@odata.type`, `@odata.id`, `@odata.editLink`,
 * `@odata.etag`, `#entityctl.Close`. Full metadata advertises every instance method; minimal
 * those `$select` names (`selected`), as `"#entityctl.Close": {}` (JSON 4.01 §16: title and
 * target may be left out, the client computes them).
 */
export function entityOpening(json: JsonOutput, entity: EntityModel, alias: string, etag: boolean, selected: readonly string[] = []): JsonMember[] {
  const full = json.format.metadata === 'full'
  const advertised = json.format.metadata === 'minimal' ? selected.map((name) => ({ name: `#${json.qualified(json.publicName(name))}`, json: `'{}'` })) : []
  return [
    ...(full ? entityLinks(json, entity, alias) : []),
    ...(etag && json.format.metadata !== 'none' ? [{ name: '@odata.etag', json: toJson(entityTagSql(alias)) }] : []),
    ...(full ? operations(json, entity, alias) : advertised),
  ]
}

/**
 * odata.metadata=full: the link of each navigation property, expanded or not, each followed by
 * what `expanded` gives for it (OData JSON 4.01 §8.1: the link immediately precedes the
 * expanded navigation property).
 */
export function navigationLinks(json: JsonOutput, entity: EntityModel, alias: string, expanded: (property: string) => JsonMember[] = () => []): JsonMember[] {
  return [...entity.properties.values()].flatMap((property) => {
    if (property.kind === 'scalar') return []
    const name = json.publicName(property.name)
    const link = { name: `${name}@odata.navigationLink`, json: toJson(`${modelString(`${entity.setName}(`)} || ${alias}."Guid" || ${modelString(`)/${name}`)}`) }
    return [link, ...expanded(property.name)]
  })
}

/** odata.metadata=full: the entity's type, id and edit link. */
function entityLinks(json: JsonOutput, entity: EntityModel, alias: string): JsonMember[] {
  const id = toJson(`${modelString(`${entity.setName}(`)} || ${alias}."Guid" || ')'`)
  return [
    { name: '@odata.type', json: modelString(JSON.stringify(`#${json.qualified(entity.name)}`)) },
    { name: '@odata.id', json: id },
    { name: '@odata.editLink', json: id },
  ]
}

/**
 * odata.metadata=full: the entity's instance methods, each advertised as
 * `"#entityctl.Close": {"title", "target"}` (OData JSON 4.01 §16, §17: full metadata gives both),
 * a function's target taking its parameters as aliases: `Customers(k)/entityctl.Revenue()`,
 * `…/entityctl.Seen(after=@after)`.
 */
function operations(json: JsonOutput, entity: EntityModel, alias: string): JsonMember[] {
  return [...entity.methods].flatMap(([name, method]) => {
    if (method.static) return [] // bound to the collection, not to this entity
    const operation = json.qualified(json.publicName(name))
    const params = Object.keys(method.params).map((param) => `${json.publicName(param)}=@${json.publicName(param)}`)
    const call = method.kind === 'read' ? `(${params.join(',')})` : ''
    const title = JSON.stringify(method.description || json.publicName(name))
    const target = `${modelString(`{"title":${title},"target":"${entity.setName}(`)} || ${alias}."Guid" || ${modelString(`)/${operation}${call}"}`)}`
    return [{ name: `#${operation}`, json: target }]
  })
}
