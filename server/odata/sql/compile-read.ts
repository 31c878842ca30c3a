// Read plans → SQL whose JSON PostgreSQL builds, so Node parses nothing. The JSON is compact,
// as every other answer is: concatenated from keys and to_json values (json-rows.ts;
// json_build_object and json_agg would put spaces between the tokens, and cost PostgreSQL more).
// Expanded navigations are correlated subqueries, each with its own filter, order and page,
// so a read is one statement whatever its depth: no N+1. The plan (plan/read-plan.ts) has
// decided the order, its tie-break, the page and the count; this module prints them and
// decides nothing of its own.
//
// A collection read answers one row per entity of its page, in order, its JSON as `body`
// with its length in bytes as `size`, so the handler can stream the page to the socket and
// stop at ApiOptions:MaxResponseBytes (read-handler.ts). A body longer than that on its own
// comes as null (with its size): no value larger than the budget ever reaches Node.
//
// The page is cut first, on plain rows with their sort keys as "@o<i>" columns, and the JSON
// is built only for the rows kept, in that explicit order:
//
//   Orders?$filter=Total gt 100&$top=2&$select=Number
//   →  select octet_length(j.body) as size, case when octet_length(j.body) <= 33554432 then j.body end as body
//      from (select ('{"@odata.etag":' || … || ',"Guid":' || coalesce(to_json(t0."Guid")::text, 'null') || … || '}') as body
//            from (select t0.*, t0.xmin, t0."Guid" as "@o0" from "Order" t0 where t0."Total" > $1::numeric
//                  order by t0."Guid" limit 2) t0 order by t0."@o0" offset 0) j
//
// `offset 0` keeps the JSON from being computed twice (once per use of j.body); the scan of
// j keeps the order of its subquery. With $count=true the filtered relation is written once,
// as a `not materialized` CTE that PostgreSQL plans into both the count and the page; the
// count comes as `count` on every row, and as the only column of a single row when the page
// is empty. The @odata.context URL is not part of the statement: the handler writes it.

import type { EntityModel, ScalarProperty } from '../../model/model.ts'
import { entityTagSql } from '../../persistence/entity-tag.ts'
import type { CollectionPlan, CountPlan, EntityPlan, Page, PlannedEntity, PlannedExpand, SortKey } from '../plan/read-plan.ts'
import type { BoundCollectionRead, BoundExpression, BoundNavigationNeed, ParentLink } from '../semantic/bound.ts'
import { compileExpression, enumOrdinal, JoinSet } from './compile-expression.ts'
import { compileApply, compileAppliedCount } from './compile-apply.ts'
import { entityOpening, navigationLinks } from './entity-control.ts'
import { itemRows, jsonArray, jsonObject, toJson, type JsonMember } from './json-rows.ts'
import { ident, jsonValue, modelString, SqlBuilder, type CompiledQuery, type JsonOutput } from './sql-builder.ts'
import type { SqlParameters } from '../../persistence/sql-parameters.ts'
import { typeAnnotation, valueTypeAnnotation } from '../serializer/type-annotation.ts'

/**
 * A read's statement: for a collection, rows of `size` and `body` (null when the entity alone
 * is over the budget), `count` with $count=true and `more` (its body null) after a full
 * server-driven page; for one entity, `size`, `body` and `etag`.
 */
export interface CompiledRead extends CompiledQuery {
  /** keySlots[i]: the index in `params` of the resource path's key i (SqlBuilder.pathKey). */
  readonly keySlots: readonly number[]
}

/**
 * `maxBytes`: ApiOptions:MaxResponseBytes; a larger entity comes as a null body. `json`: how
 * the entities are written (odata.metadata, IEEE754Compatible); minimal without.
 */
export function compileCollectionRead(plan: CollectionPlan, maxBytes: number, json?: JsonOutput): CompiledRead {
  const builder = new SqlBuilder(json)
  const read = plan.source
  const alias = builder.alias(read.read.range)
  const joins = new JoinSet(builder)
  // The parent's key is one parameter wherever it is used, so a cached plan fills it once.
  const parentKey = read.parent && builder.pathKey(read.parent.key, 0)
  if (read.apply) {
    // $apply transforms the collection the path addresses: the pipeline starts from its scope.
    const rows = compileApply(builder, plan, maxBytes, pathScope(builder, read, alias, parentKey))
    return { sql: read.parent ? unlessParentMissing(read.parent, parentKey!, rows) : rows, params: builder.params, keySlots: builder.keySlots }
  }
  const where = conditions(builder, joins, read.filter, pathScope(builder, read, alias, parentKey))
  const order = sortKeys(builder, joins, plan.order)
  const relation = `from ${ident(read.entity.table)} ${alias} ${joins.sql()} ${where}`
  // With a count, the filtered relation (filter, joins, sort keys) is written once and read twice.
  const filtered = plan.count ? '"@filtered"' : undefined
  const page = (limit: number | undefined) =>
    filtered
      ? `select ${alias}.* from ${filtered} ${alias} order by ${order.outer(alias)}${pageClause({ limit, offset: plan.page.offset })}`
      : pageOfRows(alias, relation, order, { limit, offset: plan.page.offset })
  const count = filtered && `select count(*) from ${filtered}`
  const withCte = (sql: string) => (filtered ? `with ${filtered} as not materialized (select ${rowColumns(alias)}, ${order.columns} ${relation}) ${sql}` : sql)
  const withFiltered = (sql: string) => (read.parent ? unlessParentMissing(read.parent, parentKey!, withCte(sql)) : withCte(sql))
  const row = rowJson(builder, plan.entity)
  if (plan.serverPage) {
    // One row more than a page tells whether a next page exists (its JSON is not built);
    // the handler then adds @odata.nextLink.
    const size = plan.serverPage.size
    const numbered = `select q.*, row_number() over (order by ${order.outer('q')}) as "@n" from (${page(plan.page.limit)}) q`
    const items = `select case when ${alias}."@n" <= ${size} then ${row} end as body, ${alias}."@n" > ${size} as more from (${numbered}) ${alias} order by ${order.outer(alias)}`
    return { sql: withFiltered(itemRows(items, maxBytes, count, ['more'])), params: builder.params, keySlots: builder.keySlots }
  }
  const items = `select ${row} as body from (${page(plan.page.limit)}) ${alias} order by ${order.outer(alias)}`
  return { sql: withFiltered(itemRows(items, maxBytes, count)), params: builder.params, keySlots: builder.keySlots }
}

/**
 * The sort of a page: each key compiled once, written in the inner ORDER BY and selected as
 * "@o<i>", so the outer aggregation orders by the same values without recomputing them.
 */
interface SortKeys {
  readonly inner: string
  readonly columns: string
  outer(alias: string): string
}

function sortKeys(builder: SqlBuilder, joins: JoinSet, order: readonly SortKey[]): SortKeys {
  const keys = order.map((key) => {
    const target = { builder, joins }
    const sql = enumOrdinal(target, key.expression) ?? compileExpression(target, key.expression)
    return { sql, modifiers: `${key.descending ? ' desc' : ''}${key.nulls ? ` nulls ${key.nulls}` : ''}` }
  })
  return {
    inner: keys.map((k) => `${k.sql}${k.modifiers}`).join(', '),
    columns: keys.map((k, i) => `${k.sql} as "@o${i}"`).join(', '),
    outer: (outer) => keys.map((k, i) => `${outer}."@o${i}"${k.modifiers}`).join(', '),
  }
}

/** The rows of one page, plain (no JSON yet), with their sort keys. */
function pageOfRows(alias: string, relation: string, order: SortKeys, page: Page): string {
  return `select ${rowColumns(alias)}, ${order.columns} ${relation} order by ${order.inner}${pageClause(page)}`
}

/** A row's columns and its xmin, a system column `t.*` leaves out: its ETag reads it (entity-tag.ts). */
function rowColumns(alias: string): string {
  return `${alias}.*, ${alias}.xmin`
}

function pageClause(page: Page): string {
  return `${page.limit !== undefined ? ` limit ${page.limit}` : ''}${page.offset ? ` offset ${page.offset}` : ''}`
}

/**
 * `Customers(<key>)/Orders` when that customer does not exist: one row whose `missing` is
 * true (the handler answers 404), where an empty page would be a customer without orders.
 * A nested loop over the single check row keeps the order of the page.
 */
function unlessParentMissing(parent: ParentLink, key: string, rows: string): string {
  const exists = `exists (select 1 from ${ident(parent.navigation.entity.table)} p where p."Guid" = ${key})`
  return `select m.missing, r.* from (select not ${exists} as missing) m left join lateral (${rows}) r on not m.missing`
}

/**
 * One entity: a row of `size`, `body` (null when over `maxBytes`) and `etag`, or none.
 * `from`: where the row is read instead of its table, with the parameters of the statement
 * it is part of: a write's reply reads the row the write's statement returns (unit-of-work.ts).
 *   Orders(<key>)?$select=Total, from "w0"
 *   →  select … from (select ('{"@odata.etag":…,"Total":' || … || '}') as body, … from "w0" t0 where t0."Guid" = $30::uuid offset 0) j
 */
export function compileEntityRead(plan: EntityPlan, maxBytes: number, json?: JsonOutput, from?: { relation: string; params: SqlParameters }): CompiledRead {
  const builder = new SqlBuilder(json, from?.params)
  const read = plan.source
  const alias = builder.alias(read.read.range)
  // Orders(k)/Lines(m): a line of that order with that key, the parent's key first in the path.
  const where = !read.parent
    ? `${alias}."Guid" = ${builder.pathKey(read.key, 0)}`
    : [...parentCondition(builder, read.parent, alias), ...(read.key ? [`${alias}."Guid" = ${builder.pathKey(read.key, 1)}`] : [])].join(' and ')
  const row = rowJson(builder, plan.entity)
  const entity = `select ${row} as body, ${entityTagSql(alias)} as etag from ${from?.relation ?? ident(read.entity.table)} ${alias} where ${where}`
  return { sql: itemRows(entity, maxBytes, undefined, ['etag']), params: builder.params, keySlots: builder.keySlots }
}

/**
 * `Orders/$count`: one row, its `body` the count as text; null when the path's parent entity
 * does not exist. With $apply, the count of the rows it produced: $apply defines the
 * collection the other options, and the count, apply to (Data Aggregation 3).
 */
export function compileCount(plan: CountPlan): CompiledRead {
  const builder = new SqlBuilder()
  const read: BoundCollectionRead = plan.source
  const alias = builder.alias(read.read.range)
  const parentKey = read.parent && builder.pathKey(read.parent.key, 0)
  const scope = pathScope(builder, read, alias, parentKey)
  const count = read.apply ? compileAppliedCount(builder, read, scope) : countOf(builder, read, alias, scope)
  if (!read.parent) return { sql: `select (${count}) as body`, params: builder.params, keySlots: builder.keySlots }
  const parentTable = ident(read.parent.navigation.entity.table)
  return { sql: `select case when exists (select 1 from ${parentTable} p where p."Guid" = ${parentKey}) then (${count}) end as body`, params: builder.params, keySlots: builder.keySlots }
}

function countOf(builder: SqlBuilder, read: BoundCollectionRead, alias: string, scope: readonly string[]): string {
  const joins = new JoinSet(builder)
  const where = conditions(builder, joins, read.filter, scope)
  return `select count(*)::text from ${ident(read.entity.table)} ${alias} ${joins.sql()} ${where}`
}

/**
 * Whether the entity a navigation path starts from exists: `Roles(<key>)/Parent` that finds no
 * parent is a role without one (204), or no such role (404).
 */
export function compileParentExists(parent: ParentLink): CompiledQuery {
  const builder = new SqlBuilder()
  return { sql: `select exists (select 1 from ${ident(parent.navigation.entity.table)} p where p."Guid" = ${builder.param(parent.key, 'guid')}) as "exists"`, params: builder.params }
}

/** Customers(<key>)/Orders → the orders whose Customer is <key>; Orders(<key>)/Customer → that order's customer. */
function parentCondition(builder: SqlBuilder, parent: ParentLink | undefined, alias: string, keyParam?: string): string[] {
  if (!parent) return []
  const key = keyParam ?? builder.pathKey(parent.key, 0)
  const navigation = parent.navigation
  if (navigation.kind === 'collection') return [`${alias}.${ident(navigation.inverse.column)} = ${key}`]
  return [`${alias}."Guid" = (select p.${ident(navigation.column)} from ${ident(navigation.entity.table)} p where p."Guid" = ${key})`]
}

/** The entities a collection path addresses: a navigation's parent, a method's result. */
function pathScope(builder: SqlBuilder, read: BoundCollectionRead, alias: string, parentKey: string | undefined): string[] {
  const scope = parentCondition(builder, read.parent, alias, parentKey)
  if (read.keys) scope.push(`${alias}."Guid" = any(${builder.rawParam(read.keys)}::uuid[])`)
  return scope
}

function conditions(builder: SqlBuilder, joins: JoinSet, filter: BoundExpression | undefined, extra: readonly string[] = []): string {
  const parts = [...extra]
  if (filter) parts.push(compileExpression({ builder, joins }, filter))
  return parts.length ? `where ${parts.join(' and ')}` : ''
}

/** The JSON object of one entity: selected columns, etag, hidden inputs of virtuals, expands. */
function rowJson(builder: SqlBuilder, planned: PlannedEntity): string {
  const read = planned.read
  const alias = builder.alias(read.range)
  const idOf = (entity: EntityModel) => `${modelString(`${entity.setName}(`)} || ${alias}."Guid" || ')'`
  if (read.ref) return jsonObject([{ name: '@odata.id', json: toJson(idOf(read.range.entity)) }])
  const members: JsonMember[] = []
  const { format } = builder.json
  const full = format.metadata === 'full'
  members.push(...entityOpening(builder.json, read.range.entity, alias, read.etag, read.operations))
  for (const item of read.select) {
    if (full) members.push(...typeMember(item.publicName, typeAnnotation(builder.json.propertyType(item.property))))
    members.push({ name: item.publicName, json: toJson(columnJson(alias, item.property, format.ieee754)) })
  }
  // A virtual value is computed in Node (finish-entities.ts), in the place kept for it here:
  // among the structural properties, before the navigations.
  for (const item of read.virtuals) {
    if (full) members.push(...typeMember(item.publicName, typeAnnotation(builder.json.propertyType(item.property))))
    members.push({ name: item.publicName, json: `'null'` })
  }
  for (const item of read.needs) members.push({ name: `@needs.${item.property.name}`, json: toJson(columnJson(alias, item.property, false)) })
  for (const need of read.navigationNeeds ?? []) members.push({ name: `@needs.${need.navigation.name}`, json: navigationNeedJson(builder, alias, need) })
  for (const item of read.computed ?? []) {
    if (full) members.push(...typeMember(item.alias, valueTypeAnnotation(item.expression.type)))
    members.push({ name: item.alias, json: toJson(computedJson(builder, item.expression, format.ieee754)) })
  }
  if (!full) {
    for (const expand of planned.expands) members.push(...expandJson(builder, alias, expand))
    return jsonObject(members)
  }
  // Full metadata: each navigation's link, and right after it the navigation when expanded.
  const expanded = (property: string) => planned.expands.filter((expand) => expand.expand.navigation.name === property).flatMap((expand) => expandJson(builder, alias, expand))
  members.push(...navigationLinks(builder.json, read.range.entity, alias, expanded))
  return jsonObject(members)
}

/** `Total@odata.type` before Total, when its JSON does not tell its type (full metadata). */
function typeMember(name: string, annotation: string | undefined): JsonMember[] {
  return annotation ? [{ name: `${name}@odata.type`, json: modelString(JSON.stringify(annotation)) }] : []
}

/**
 * A $compute value of the row. Paths through references join their tables inside a scalar
 * subquery correlated to the row, as the row's JSON has no FROM of its own to join them to.
 *   $compute=Customer/Name as Buyer  →  (select j0."Name" from (select) v left join "Customer" j0 on j0."Guid" = t0."Customer_Guid")
 */
function computedJson(builder: SqlBuilder, expression: BoundExpression, ieee754: boolean): string {
  const joins = new JoinSet(builder)
  const value = compileExpression({ builder, joins }, expression)
  // Written as JSON inside the subquery: a duration's JSON reads its value more than once.
  const json = ieee754 && expression.type === 'decimal' ? `(${value})::text` : jsonValue(value, expression.type)
  return joins.sql() ? `(select ${json} from (select) v ${joins.sql()})` : json
}

/**
 * What a virtual property's rule reads through a navigation, as a JSON object (a reference) or
 * an array of them in Guid order (a collection), with the properties its `from` names:
 *   from: ['Dept.Name']  →  coalesce((select '{"Guid":' || … || '}' from "Dept" j0 where j0."Guid" = t0."Dept_Guid"), 'null')
 */
function navigationNeedJson(builder: SqlBuilder, parentAlias: string, need: BoundNavigationNeed): string {
  const { navigation } = need
  const alias = builder.joinAlias()
  const row = jsonObject(need.properties.map((property) => ({ name: property.name, json: toJson(columnJson(alias, property, false)) })))
  const table = `${ident(navigation.target.table)} ${alias}`
  if (navigation.kind === 'reference') return `coalesce((select ${row} from ${table} where ${alias}."Guid" = ${parentAlias}.${ident(navigation.column)}), 'null')`
  return `(select ${jsonArray(row, `${alias}."Guid"`)} from ${table} where ${alias}.${ident(navigation.inverse.column)} = ${parentAlias}."Guid")`
}

function columnJson(alias: string, property: ScalarProperty, ieee754: boolean): string {
  const column = `${alias}.${ident(property.column!)}`
  // An encrypted value is text until the read path decrypts it after the statement.
  if (property.type === 'DateTimeOffset' && !property.decl.encrypted) return jsonValue(column, 'dateTimeOffset')
  // IEEE754Compatible=true: a decimal as a string keeps digits a JavaScript number would lose.
  if (ieee754 && property.type === 'Decimal' && !property.decl.encrypted) return `${column}::text`
  return column
}

function expandJson(builder: SqlBuilder, parentAlias: string, planned: PlannedExpand): JsonMember[] {
  const { expand } = planned
  const navigation = expand.navigation
  const alias = builder.alias(expand.read.range)
  const table = `${ident(navigation.target.table)} ${alias}`
  const row = rowJson(builder, planned.entity)
  if (navigation.kind === 'reference') {
    return [{ name: expand.publicName, json: `coalesce((select ${row} from ${table} where ${alias}."Guid" = ${parentAlias}.${ident(navigation.column)}), 'null')` }]
  }
  const link = `${alias}.${ident(navigation.inverse.column)} = ${parentAlias}."Guid"`
  const joins = new JoinSet(builder)
  const where = conditions(builder, joins, expand.filter, [link])
  const order = sortKeys(builder, joins, planned.order)
  // The members' relation, compiled once: the page reads it, and so does the count.
  const relation = `from ${table} ${joins.sql()} ${where}`
  const page = pageOfRows(alias, relation, order, planned.page)
  const members: JsonMember[] = []
  // IEEE754Compatible=true: the count (Edm.Int64) as a string. It comes before the members
  // (OData JSON 4.01 §4.4: a property's control information precedes it).
  const count = `(select count(*)::text ${relation})`
  if (planned.count) members.push({ name: `${expand.publicName}@odata.count`, json: builder.json.format.ieee754 ? toJson(count) : count })
  if (!expand.countOnly) members.push({ name: expand.publicName, json: `(select ${jsonArray(row, order.outer(alias))} from (${page}) ${alias})` })
  return members
}
