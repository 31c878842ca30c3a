// $apply → SQL: filters before the aggregation become WHERE, groupby/aggregate a GROUP BY
// whose row is built as JSON with grouping paths nested, each object a transient instance
// ("@odata.id": null), and the stages after it (filter, orderby, top, skip, then
// $orderby/$top/$skip/$count) work on the aggregated rows.
//   filter(Status eq 'Closed')/groupby((Customer/Country),aggregate(Total with sum as Revenue))
//   →  select '{"@odata.id":' || 'null' || ',"Customer":' || '{"@odata.id":' || 'null' || ',"Country":' || coalesce(to_json(j0."Country")::text, 'null') || '}'
//             || ',"Revenue":' || coalesce(to_json(sum(t0."Total"))::text, 'null') || '}'
//      from "Order" t0 left join "Customer" j0 on … where t0."Status" = $1::text group by j0."Country"

import { QueryError } from '../../errors.ts'
import { KEY } from '../../model/model.ts'
import type { CollectionPlan, SortKey } from '../plan/read-plan.ts'
import type { BoundAggregation, BoundApplyStage, BoundCollectionRead, BoundExpression, BoundGroupKey, BoundOrderby } from '../semantic/bound.ts'
import { compileExpression, enumMembers, enumOrdinal, JoinSet, type ExpressionTarget } from './compile-expression.ts'
import { entityOpening, navigationLinks } from './entity-control.ts'
import { itemRows, jsonObject, toJson, type JsonMember } from './json-rows.ts'
import { ident, jsonValue, modelString, type SqlBuilder } from './sql-builder.ts'
import { typeAnnotation, valueTypeAnnotation } from '../serializer/type-annotation.ts'

// min and max are extremeSql's: they order values as $orderby does.
const AGGREGATE_SQL: Record<string, (x: string) => string> = {
  sum: (x) => `sum(${x})`,
  average: (x) => `avg(${x})`,
  countdistinct: (x) => `count(distinct ${x})::int`,
}

/**
 * The rows $apply produced as the rows of a collection answer (json-rows.ts, itemRows), in the
 * plan's order and page. `scope`: the resource path's conditions on the entities (a
 * navigation's parent, a method's result), which the pipeline starts from.
 */
export function compileApply(builder: SqlBuilder, plan: CollectionPlan, maxBytes: number, scope: readonly string[]): string {
  const { query, order } = appliedRows(builder, plan.source, scope, plan.order)
  const page = `${plan.page.limit !== undefined ? ` limit ${plan.page.limit}` : ''}${plan.page.offset ? ` offset ${plan.page.offset}` : ''}`
  const count = plan.count ? `select count(*) from (${query}) c` : undefined
  const rows = `select s.j from (${query}) s${order ? ` order by ${order}` : ''}${page}`
  if (plan.serverPage) {
    // A server-driven page, as for entities (compile-read.ts): one row more than the page says
    // whether a next one exists, without its JSON. Numbered in the page's order.
    const size = plan.serverPage.size
    const numbered = `select r.j, row_number() over () as n from (${rows}) r`
    const items = `select case when p.n <= ${size} then p.j end as body, p.n > ${size} as more from (${numbered}) p order by p.n`
    return itemRows(items, maxBytes, count, ['more'])
  }
  return itemRows(`select r.j as body from (${rows}) r`, maxBytes, count)
}

/** `Orders/$count?$apply=…`: the number of rows the pipeline produced, as text. */
export function compileAppliedCount(builder: SqlBuilder, read: BoundCollectionRead, scope: readonly string[]): string {
  return `select count(*)::text from (${appliedRows(builder, read, scope, []).query}) c`
}

/**
 * The pipeline's rows as `s`, each with its JSON `j`, and `order`, how `s` sorts in the plan's
 * order: by sort keys the entities' query selects as "@o<i>" when nothing aggregates them,
 * else by the aggregated columns.
 */
function appliedRows(builder: SqlBuilder, read: BoundCollectionRead, scope: readonly string[], order: readonly SortKey[]): { query: string; order: string } {
  const stages = read.apply!
  const alias = builder.alias(read.read.range)
  const joins = new JoinSet(builder)
  const aggregateAt = stages.findIndex((s) => s.kind === 'aggregate')
  const before = aggregateAt === -1 ? stages : stages.slice(0, aggregateAt)
  const after = aggregateAt === -1 ? [] : stages.slice(aggregateAt + 1)
  const pre: string[] = [...scope]
  // $filter is evaluated on what $apply produced (Data Aggregation 3.3): on the entities when
  // nothing aggregates them, else on the aggregated rows, below.
  if (read.filter && aggregateAt === -1) pre.push(compileExpression({ builder, joins }, read.filter))
  for (const stage of before) {
    if (stage.kind === 'filter') pre.push(compileExpression({ builder, joins }, stage.predicate))
    else if (stage.kind !== 'compute') {
      throw QueryError.invalid(`$apply: ${stage.kind}() before the aggregation is not supported; put it after groupby/aggregate.`)
    }
  }
  const where = pre.length ? `where ${pre.map((p) => `(${p})`).join(' and ')}` : ''
  if (aggregateAt === -1) {
    // No aggregation: the rows are the entities (keys plus computed aliases), sorted as entities
    // are, and written as an entity read writes them (entity-control.ts): etag, and in full
    // metadata type, id, links and methods, as `Orders?$filter=…&$compute=…` answers them.
    const computes = before.flatMap((s) => (s.kind === 'compute' ? s.items : []))
    const full = builder.json.format.metadata === 'full'
    const typed = (name: string, annotation: string | undefined) => (full && annotation ? [typeMember(name, annotation)] : [])
    const entity = read.read.range.entity
    const key = builder.json.publicName(KEY)
    const members = [
      ...entityOpening(builder.json, entity, alias, read.read.etag),
      ...typed(key, '#Guid'),
      { name: key, json: toJson(`${alias}.${ident(KEY)}`) },
      ...computes.flatMap((c) => [...typed(c.alias, valueTypeAnnotation(c.expression.type)), { name: c.alias, json: toJson(jsonValue(compileExpression({ builder, joins }, c.expression), c.expression.type)) }]),
      ...(full ? navigationLinks(builder.json, entity, alias) : []),
    ]
    const keys = order.map((key) => ({ sql: sortValue({ builder, joins }, key.expression), modifiers: modifiers(key) }))
    const columns = [`${jsonObject(members)} as j`, ...keys.map((k, i) => `${k.sql} as "@o${i}"`)]
    const query = `select ${columns.join(', ')} from ${ident(read.entity.table)} ${alias} ${joins.sql()} ${where}`
    return { query, order: keys.map((k, i) => `s."@o${i}"${k.modifiers}`).join(', ') }
  }
  const stage = stages[aggregateAt] as Extract<BoundApplyStage, { kind: 'aggregate' }>
  const groups = stage.groupBy.map((key) => compileExpression({ builder, joins }, key.expression))
  const aggregates = stage.aggregations.map((a) => aggregateSql(builder, joins, a))
  const refs = new Map<string, string>()
  stage.groupBy.forEach((key, i) => refs.set(key.path.join('/'), `s.g${i}`))
  stage.aggregations.forEach((a, i) => refs.set(a.alias, `s.a${i}`))
  const columns = [...groups.map((g, i) => `${g} as g${i}`), ...aggregates.map((a, i) => `${a} as a${i}`)]
  const values = groups.map((g, i) => toJson(jsonValue(g, stage.groupBy[i].expression.type)))
  // IEEE754Compatible=true: sums and averages (Edm.Decimal) and counts (Edm.Int64) as strings.
  const aggregateJson = (sql: string, aggregation: BoundAggregation) =>
    toJson(builder.json.format.ieee754 && (aggregation.type === 'decimal' || aggregation.method === 'count' || aggregation.method === 'countdistinct') ? `(${sql})::text` : jsonValue(sql, aggregation.type))
  // odata.metadata=full: the type of each value its JSON does not tell (type-annotation.ts).
  const full = builder.json.format.metadata === 'full'
  const groupTypes = stage.groupBy.map((key) => (full ? expressionTypeAnnotation(builder, key.expression) : undefined))
  const aggregated = stage.aggregations.flatMap((a, i) => {
    const type = full ? (a.method === 'count' || a.method === 'countdistinct' ? '#Int64' : valueTypeAnnotation(a.type)) : undefined
    return [...(type ? [typeMember(a.alias, type)] : []), { name: a.alias, json: aggregateJson(aggregates[i], a) }]
  })
  // The rows are transient instances, and so is each group nested through a navigation
  // (Data Aggregation 3.2: instances "without entity-id"): OData JSON §4.5.8 has a 4.0 payload
  // say so, `"@odata.id": null`, which keeps clients from building edit links for them; a 4.01
  // payload may, and one statement serves both. With metadata=none no control information.
  const transient = builder.json.format.metadata === 'none' ? [] : [TRANSIENT_ID]
  const json = jsonObject([...transient, ...nestedGroups(stage.groupBy, values, groupTypes, transient), ...aggregated])
  let query = `select ${json} as j, ${columns.join(', ')} from ${ident(read.entity.table)} ${alias} ${joins.sql()} ${where}${groups.length ? ` group by ${groups.join(', ')}` : ''}`
  const target = { builder, joins: new JoinSet(builder), aggregateRef: (name: string) => refs.get(name)! }
  for (const stage of after) query = wrapStage(target, query, stage)
  if (read.filter) query = wrapStage(target, query, { kind: 'filter', predicate: read.filter })
  return { query, order: order.map((key) => `${sortValue(target, key.expression)}${modifiers(key)}`).join(', ') }
}

function aggregateSql(builder: SqlBuilder, joins: JoinSet, aggregation: BoundAggregation): string {
  if (aggregation.method === 'count') return 'count(*)::int'
  const expression = aggregation.expression!
  const value = compileExpression({ builder, joins }, expression)
  if (aggregation.method === 'min' || aggregation.method === 'max') return extremeSql(builder, aggregation.method, expression, value)
  return AGGREGATE_SQL[aggregation.method](value)
}

/**
 * min and max in the order $orderby sorts by: an enumeration by its members, a Boolean false
 * before true, a Guid as PostgreSQL orders uuid (its bytes, so its text in code point order);
 * PostgreSQL has no min or max of uuid or boolean.
 *   Status with max as M  →  ($1::text[])[max(array_position($1::text[], t0."Status"))]
 *   Guid with min as M    →  min(t0."Guid"::text collate "C")::uuid
 */
function extremeSql(builder: SqlBuilder, method: 'min' | 'max', expression: BoundExpression, value: string): string {
  const members = enumMembers(expression)
  if (members) {
    const list = `${builder.rawParam(members)}::text[]`
    return `(${list})[${method}(array_position(${list}, ${value}))]`
  }
  if (expression.type === 'boolean') return `${method === 'min' ? 'bool_and' : 'bool_or'}(${value})`
  if (expression.type === 'guid') return `${method}(${value}::text collate "C")::uuid`
  return `${method}(${value})`
}

/** `"@odata.id": null`: an instance without entity-id (OData JSON §4.5.8). */
const TRANSIENT_ID: JsonMember = { name: '@odata.id', json: `'null'` }

/** groupby((Customer/Country,Status)) → Customer: {Country: …}, Status: …; each nested object opening with `marks`. */
function nestedGroups(keys: readonly BoundGroupKey[], sql: readonly string[], types: readonly (string | undefined)[], marks: readonly JsonMember[]): JsonMember[] {
  interface Node { children: Map<string, Node>; value?: string; type?: string }
  const root: Node = { children: new Map() }
  keys.forEach((key, i) => {
    let node = root
    for (const segment of key.path) {
      if (!node.children.has(segment)) node.children.set(segment, { children: new Map() })
      node = node.children.get(segment)!
    }
    node.value = sql[i]
    node.type = types[i]
  })
  const members = (node: Node): JsonMember[] =>
    [...node.children].flatMap(([name, child]) => [...(child.type ? [typeMember(name, child.type)] : []), { name, json: child.value ?? jsonObject([...marks, ...members(child)]) }])
  return members(root)
}

/** What a value sorts by: an enumeration by the order of its members, as $orderby sorts it. */
function sortValue(target: ExpressionTarget, expression: BoundExpression): string {
  return enumOrdinal(target, expression) ?? compileExpression(target, expression)
}

function modifiers(key: SortKey): string {
  return `${key.descending ? ' desc' : ''}${key.nulls ? ` nulls ${key.nulls}` : ''}`
}

/** OData sorts null first ascending and last descending, PostgreSQL the other way round. */
function orderItems(target: ExpressionTarget, items: readonly BoundOrderby[]): string {
  return items.map((o) => `${sortValue(target, o.expression)}${o.descending ? ' desc nulls last' : ' nulls first'}`).join(', ')
}

function wrapStage(target: { builder: SqlBuilder; joins: JoinSet; aggregateRef: (n: string) => string }, query: string, stage: BoundApplyStage): string {
  const expression = (e: BoundExpression) => compileExpression(target, e)
  switch (stage.kind) {
    case 'filter':
      return `select s.* from (${query}) s where ${expression(stage.predicate)}`
    case 'orderby':
      return `select s.* from (${query}) s order by ${orderItems(target, stage.items)}`
    case 'top':
      return `select s.* from (${query}) s limit ${stage.count}`
    case 'skip':
      return `select s.* from (${query}) s offset ${stage.count}`
    default:
      throw QueryError.invalid(`$apply: ${stage.kind}() after the aggregation is not supported.`)
  }
}

/** `Total@odata.type` before Total. */
function typeMember(name: string, annotation: string): JsonMember {
  return { name: `${name}@odata.type`, json: modelString(JSON.stringify(annotation)) }
}

/** A grouped value's annotation: a property's declared type (an enumeration's own), else the expression's. */
function expressionTypeAnnotation(builder: SqlBuilder, expression: BoundExpression): string | undefined {
  return expression.kind === 'property' ? typeAnnotation(builder.json.propertyType(expression.property)) : valueTypeAnnotation(expression.type)
}
