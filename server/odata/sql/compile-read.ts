// Bound reads → SQL whose JSON PostgreSQL builds, so Node parses nothing. The JSON is written
// compact, as every other answer is: concatenated from keys written here and values through
// to_json (json_build_object and json_agg would put spaces between the tokens, and concatenation
// costs PostgreSQL less than they do; see jsonObject below). Expanded navigations are correlated subqueries, each with its own filter,
// order and page, so a read is one statement whatever its depth: no N+1.
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
//      from (select '{"@odata.etag":' || … || ',"Guid":' || coalesce(to_json(t0."Guid")::text, 'null') || … || '}' as body
//            from (select t0.*, t0."Guid" as "@o0" from "Order" t0 where t0."Total" > $1::numeric
//                  order by t0."Guid" limit 2) t0 order by t0."@o0" offset 0) j
//
// `offset 0` keeps the JSON from being computed twice (once per use of j.body); the scan of
// j keeps the order of its subquery. With $count=true the count comes as `count` on every
// row, and as the only column of a single row when the page is empty.

import type { EntityModel, ScalarProperty } from '../../model/model.ts'
import { KEY, VERSION_COLUMN } from '../../model/model.ts'
import type {
  BoundCollectionRead,
  BoundEntityByKey,
  BoundEntityRead,
  BoundExpand,
  BoundExpression,
  BoundOrderby,
  ParentLink,
} from '../semantic/bound.ts'
import { compileExpression, enumOrdinal, JoinSet } from './compile-expression.ts'
import { compileApply } from './compile-apply.ts'
import { ident, jsonValue, modelString, SqlBuilder, type CompiledQuery } from './sql-builder.ts'

/** What a read statement is compiled for: its context URL and the byte budget of its answer. */
export interface ReadOutput {
  readonly context: string
  /** ApiOptions:MaxResponseBytes; a larger entity comes as a null body. */
  readonly maxBytes: number
}

/**
 * A collection read's statement: rows of `size` and `body` (null when the entity alone is over
 * the budget); `count` with $count=true; `more` (its body null) after a full server-driven page.
 */
export interface CompiledRead extends CompiledQuery {
  /** @odata.context of the answer, written by the handler. */
  readonly context: string
  /** Server-driven paging: where the next page starts, if `more`. */
  readonly nextSkip?: number
  /** The most rows the statement returns; undefined when only the data bounds them ($apply without $top). */
  readonly maxRows?: number
}

export function compileCollectionRead(read: BoundCollectionRead, output: ReadOutput): CompiledRead {
  const builder = new SqlBuilder()
  const context = output.context
  // With $count=true, an empty page is one row (the count's).
  const rows = (page: number | undefined) => (page === undefined ? undefined : Math.max(page, read.count ? 1 : 0))
  if (read.apply) return { context, maxRows: rows(read.top), ...compileApply(builder, read, output.maxBytes) }
  const alias = builder.alias(read.read.range)
  const joins = new JoinSet(builder)
  const where = conditions(builder, joins, read.filter, read.keys, alias, parentCondition(builder, read.parent, alias))
  const from = `from ${ident(read.entity.table)} ${alias}`
  let count: string | undefined
  if (read.count) {
    const countJoins = new JoinSet(builder)
    const countWhere = conditions(builder, countJoins, read.filter, read.keys, alias, parentCondition(builder, read.parent, alias))
    count = `select count(*) ${from} ${countJoins.sql()} ${countWhere}`
  }
  const order = sortKeys(builder, joins, read.orderby, read.entity, alias)
  const page = (limit: number | undefined) => pageOfRows(alias, `${from} ${joins.sql()} ${where}`, order, limit, read.skip)
  const row = rowJson(builder, read.read)
  if (read.pageSize !== undefined) {
    // One row more than a page tells whether a next page exists (its JSON is not built);
    // the handler then adds @odata.nextLink.
    const size = read.pageSize
    const numbered = `select q.*, row_number() over (order by ${order.outer('q')}) as "@n" from (${page(size + 1)}) q`
    const items = `select case when ${alias}."@n" <= ${size} then ${row} end as body, ${alias}."@n" > ${size} as more from (${numbered}) ${alias} order by ${order.outer(alias)}`
    return { sql: itemRows(items, output.maxBytes, count, ['more']), params: builder.params, context, nextSkip: read.skip + size, maxRows: rows(size + 1) }
  }
  const items = `select ${row} as body from (${page(read.top)}) ${alias} order by ${order.outer(alias)}`
  return { sql: itemRows(items, output.maxBytes, count), params: builder.params, context, maxRows: rows(read.top) }
}

/**
 * The rows of a collection answer from `items` (ordered rows with a `body`): each with its
 * size, its body only when within `maxBytes`, and the count beside when there is one.
 */
export function itemRows(items: string, maxBytes: number, count?: string, extra: readonly string[] = []): string {
  const columns = ['octet_length(j.body) as size', `case when octet_length(j.body) <= ${Math.floor(maxBytes)} then j.body end as body`, ...extra.map((c) => `j.${ident(c)}`)]
  const rows = `select ${columns.join(', ')} from (${items} offset 0) j`
  if (count === undefined) return rows
  // Left join: an empty page is one row with the count alone. A nested loop over the single
  // count row keeps the order of the page.
  return `select c.count, p.* from (${count}) c(count) left join lateral (${rows}) p on true`
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

function sortKeys(builder: SqlBuilder, joins: JoinSet, orderby: readonly BoundOrderby[], entity: EntityModel, alias: string): SortKeys {
  const keys = orderItems(builder, joins, orderby, entity, alias)
  return {
    inner: keys.map((k) => `${k.sql}${k.modifiers}`).join(', '),
    columns: keys.map((k, i) => `${k.sql} as "@o${i}"`).join(', '),
    outer: (outer) => keys.map((k, i) => `${outer}."@o${i}"${k.modifiers}`).join(', '),
  }
}

/** The rows of one page, plain (no JSON yet), with their sort keys. */
function pageOfRows(alias: string, fromWhere: string, order: SortKeys, limit: number | undefined, offset: number | undefined): string {
  return `select ${alias}.*, ${order.columns} ${fromWhere} order by ${order.inner}${limit !== undefined ? ` limit ${limit}` : ''}${offset ? ` offset ${offset}` : ''}`
}

/** One entity: a row of `size`, `body` (null when over `maxBytes`) and `etag`, or none. */
export function compileEntityRead(read: BoundEntityByKey, output: ReadOutput): CompiledQuery {
  const builder = new SqlBuilder()
  const context = toJson(builder.param(output.context, 'string'))
  const alias = builder.alias(read.read.range)
  const where = read.parent ? parentCondition(builder, read.parent, alias)[0] : `${alias}."Guid" = ${builder.param(read.key, 'guid')}`
  const row = rowJson(builder, read.read, [{ name: '@odata.context', json: context }])
  const etag = `'W/"' || ${alias}.${ident(VERSION_COLUMN)} || '"'`
  const entity = `select ${row} as body, ${etag} as etag from ${ident(read.entity.table)} ${alias} where ${where}`
  return { sql: itemRows(entity, output.maxBytes, undefined, ['etag']), params: builder.params }
}

export function compileCount(read: BoundCollectionRead): CompiledQuery {
  const builder = new SqlBuilder()
  const alias = builder.alias(read.read.range)
  const joins = new JoinSet(builder)
  const where = conditions(builder, joins, read.filter, read.keys, alias, parentCondition(builder, read.parent, alias))
  return { sql: `select count(*)::text as body from ${ident(read.entity.table)} ${alias} ${joins.sql()} ${where}`, params: builder.params }
}

/** Customers(<key>)/Orders → the orders whose Customer is <key>; Orders(<key>)/Customer → that order's customer. */
function parentCondition(builder: SqlBuilder, parent: ParentLink | undefined, alias: string): string[] {
  if (!parent) return []
  const key = builder.param(parent.key, 'guid')
  const navigation = parent.navigation
  if (navigation.kind === 'collection') return [`${alias}.${ident(navigation.inverse.column)} = ${key}`]
  return [`${alias}."Guid" = (select p.${ident(navigation.column)} from ${ident(navigation.entity.table)} p where p."Guid" = ${key})`]
}

function conditions(builder: SqlBuilder, joins: JoinSet, filter: BoundExpression | undefined, keys: readonly string[] | undefined, alias: string, extra: string[] = []): string {
  const parts = [...extra]
  if (keys) parts.push(`${alias}."Guid" = any(${builder.rawParam(keys)}::uuid[])`)
  if (filter) parts.push(compileExpression({ builder, joins }, filter))
  return parts.length ? `where ${parts.join(' and ')}` : ''
}

/** Sort keys with OData's null order (nulls first ascending) and the key appended for stable paging. */
function orderItems(builder: SqlBuilder, joins: JoinSet, orderby: readonly BoundOrderby[], entity: EntityModel, alias: string): { sql: string; modifiers: string }[] {
  const items = orderby.map(({ expression, descending }) => {
    const nullable = !(expression.kind === 'property' && expression.via.length === 0 && (expression.property.decl.required || expression.property.name === KEY))
    const nulls = nullable ? (descending ? ' nulls last' : ' nulls first') : ''
    const target = { builder, joins }
    return { sql: enumOrdinal(target, expression) ?? compileExpression(target, expression), modifiers: `${descending ? ' desc' : ''}${nulls}` }
  })
  if (!isTotalOrder(orderby, entity)) items.push({ sql: `${alias}."Guid"`, modifiers: '' })
  return items
}

/** An order that ends in a unique, non-null key needs no tie-breaker. */
function isTotalOrder(orderby: readonly BoundOrderby[], entity: EntityModel): boolean {
  return orderby.some(({ expression }) => {
    if (expression.kind !== 'property' || expression.via.length > 0) return false
    const name = expression.property.name
    if (name === KEY) return true
    return entity.naturalKey.length === 1 && entity.naturalKey[0] === name && expression.property.decl.required
  })
}

/** The JSON object of one entity: selected columns, etag, hidden inputs of virtuals, expands. */
function rowJson(builder: SqlBuilder, read: BoundEntityRead, leading: JsonMember[] = []): string {
  const alias = builder.alias(read.range)
  const members = [...leading]
  if (read.etag) members.push({ name: '@odata.etag', json: toJson(`'W/"' || ${alias}.${ident(VERSION_COLUMN)} || '"'`) })
  for (const item of read.select) members.push({ name: item.publicName, json: toJson(columnJson(alias, item.property)) })
  for (const item of read.needs) members.push({ name: `@needs.${item.property.name}`, json: toJson(columnJson(alias, item.property)) })
  for (const expand of read.expand) members.push(...expandJson(builder, alias, expand))
  return jsonObject(members)
}

function columnJson(alias: string, property: ScalarProperty): string {
  const column = `${alias}.${ident(property.column!)}`
  // An encrypted value is text until the read path decrypts it after the statement.
  if (property.type === 'DateTimeOffset' && !property.decl.encrypted) return jsonValue(column, 'dateTimeOffset')
  return column
}

function expandJson(builder: SqlBuilder, parentAlias: string, expand: BoundExpand): JsonMember[] {
  const navigation = expand.navigation
  const alias = builder.alias(expand.read.range)
  const table = `${ident(navigation.target.table)} ${alias}`
  const row = rowJson(builder, expand.read)
  if (navigation.kind === 'reference') {
    return [{ name: expand.publicName, json: `coalesce((select ${row} from ${table} where ${alias}."Guid" = ${parentAlias}.${ident(navigation.column)}), 'null')` }]
  }
  const link = `${alias}.${ident(navigation.inverse.column)} = ${parentAlias}."Guid"`
  const joins = new JoinSet(builder)
  const where = conditions(builder, joins, expand.filter, undefined, alias, [link])
  const order = sortKeys(builder, joins, expand.orderby, navigation.target, alias)
  const page = pageOfRows(alias, `from ${table} ${joins.sql()} ${where}`, order, expand.top, expand.skip)
  const members = [{ name: expand.publicName, json: `(select ${jsonArray(row, order.outer(alias))} from (${page}) ${alias})` }]
  if (expand.count) {
    const countJoins = new JoinSet(builder)
    const countWhere = conditions(builder, countJoins, expand.filter, undefined, alias, [link])
    members.push({ name: `${expand.publicName}@odata.count`, json: `(select count(*)::text from ${table} ${countJoins.sql()} ${countWhere})` })
  }
  return members
}

/** A member of a JSON object: its name (from the model) and the SQL of its value as JSON text. */
export interface JsonMember {
  readonly name: string
  readonly json: string
}

/** A value as JSON text, `null` for SQL's null (to_json of null is null). */
export function toJson(sql: string): string {
  return `coalesce(to_json(${sql})::text, 'null')`
}

/**
 * A JSON object as text, compact: `'{"Name":' || <value> || ',"Total":' || <value> || '}'`.
 * The names are written here as JSON (JSON.stringify) inside SQL string literals; the values
 * are JSON text already (toJson, nested objects and arrays).
 */
export function jsonObject(members: readonly JsonMember[]): string {
  if (members.length === 0) return `'{}'`
  const parts = members.map((m, i) => `${modelString(`${i === 0 ? '{' : ','}${JSON.stringify(m.name)}:`)} || ${m.json}`)
  return `(${parts.join(' || ')} || '}')`
}

/** The rows' JSON objects (text) as one compact JSON array, in the given order; `[]` when none. */
export function jsonArray(element: string, orderBy: string): string {
  return `coalesce('[' || string_agg(${element}, ',' order by ${orderBy}) || ']', '[]')`
}
