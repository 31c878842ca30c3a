// Plans a bound read: the decisions between binding (what was asked) and compiling (how SQL
// says it). Knows nothing about SQL; the compiler (sql/compile-read.ts) prints a plan and
// decides nothing of its own.
//
//   Orders?$orderby=OrderDate&$count=true  (MaxTop 500)
//   →  order: OrderDate nulls first, then Guid (the tie-break that makes paging stable)
//      page:  500 rows and one more (server-driven paging: the extra row says a next page exists)
//      count: of the filtered relation, beside the page
//      next link: $skiptoken=500 when the extra row came
//
// Here, too, a read that could answer with more than ApiOptions:MaxResultItems entities is
// refused (result-size.ts), before any SQL is built. The @odata.context URL and the next link
// are the serializer's: the plan says which page comes next, never a URL.

import type { EntityModel, ScalarProperty } from '../../model/model.ts'
import { KEY } from '../../model/model.ts'
import type {
  BoundCollectionRead,
  BoundEntityByKey,
  BoundEntityRead,
  BoundExpand,
  BoundExpression,
  BoundOrderby,
  Range,
} from '../semantic/bound.ts'
import { collectionItems, entityItems, requireWithinItems } from './result-size.ts'

export interface ReadPlanLimits {
  /** ApiOptions:MaxTop: the page size of server-driven paging. */
  readonly maxTop: number
  readonly maxResultItems: number
  /** Prefer: odata.maxpagesize, at most maxTop: the page size of server-driven paging instead of maxTop. */
  readonly pageSize?: number
}

/** One key of an ORDER BY; `nulls` is absent where the value cannot be null. */
export interface SortKey {
  readonly expression: BoundExpression
  readonly descending: boolean
  readonly nulls?: 'first' | 'last'
}

/** The rows a collection keeps: `limit` (none: all) after skipping `offset`. */
export interface Page {
  readonly limit?: number
  readonly offset: number
}

/** An entity's JSON as the plan has it: what binding chose, with each collection expand planned. */
export interface PlannedEntity {
  readonly read: BoundEntityRead
  readonly expands: readonly PlannedExpand[]
}

export interface PlannedExpand {
  readonly expand: BoundExpand
  readonly entity: PlannedEntity
  /** Collection expands: their order (tie-break included) and page. */
  readonly order: readonly SortKey[]
  readonly page: Page
  readonly count: boolean
}

/** A collection, its page, its order and its count; or an $apply pipeline over it. */
export interface CollectionPlan {
  readonly kind: 'collection'
  readonly source: BoundCollectionRead
  readonly entity: PlannedEntity
  readonly order: readonly SortKey[]
  readonly page: Page
  /** Server-driven paging (no $top): the statement fetches `size` + 1 rows; the extra one means a next page starts at `nextSkip`. */
  readonly serverPage?: { readonly size: number; readonly nextSkip: number }
  /** $count=true: the count of the filtered relation comes with the page (an empty page included). */
  readonly count: boolean
  /** The most rows the statement returns; undefined when only the data bounds them ($apply without $top). */
  readonly maxRows?: number
  /** The keys of the resource path, in path order (`Orders(<key>)/Lines`). */
  readonly pathKeys: readonly string[]
}

export interface EntityPlan {
  readonly kind: 'entity'
  readonly source: BoundEntityByKey
  readonly entity: PlannedEntity
  readonly pathKeys: readonly string[]
}

/** `Orders/$count`: the number alone. */
export interface CountPlan {
  readonly kind: 'count'
  readonly source: BoundCollectionRead
  readonly pathKeys: readonly string[]
}

export type ReadPlan = CollectionPlan | EntityPlan | CountPlan

export function planCollectionRead(read: BoundCollectionRead, limits: ReadPlanLimits): CollectionPlan {
  const size = read.top === undefined ? (limits.pageSize ?? limits.maxTop) : undefined
  requireWithinItems(collectionItems(read, limits.maxTop), limits.maxResultItems)
  // With $count=true, an empty page is one row (the count's).
  const rows = (page: number | undefined) => (page === undefined ? undefined : Math.max(page, read.count ? 1 : 0))
  const base = { kind: 'collection', source: read, entity: planEntity(read.read, limits), count: read.count, pathKeys: parentKeys(read) } as const
  const order = read.apply ? appliedOrder(read) : sortKeys(read.orderby, read.read.range)
  if (size !== undefined) {
    return { ...base, order, page: { limit: size + 1, offset: read.skip }, serverPage: { size, nextSkip: read.skip + size }, maxRows: rows(size + 1) }
  }
  return { ...base, order, page: { limit: read.top, offset: read.skip }, maxRows: rows(read.top) }
}

export function planEntityRead(read: BoundEntityByKey, limits: ReadPlanLimits): EntityPlan {
  requireWithinItems(entityItems(read.read, limits.maxTop), limits.maxResultItems)
  // Orders(k)/Lines(m): the parent's key, then the member's.
  const pathKeys = read.parent ? (read.key ? [read.parent.key, read.key] : [read.parent.key]) : [read.key]
  return { kind: 'entity', source: read, entity: planEntity(read.read, limits), pathKeys }
}

export function planCount(read: BoundCollectionRead): CountPlan {
  return { kind: 'count', source: read, pathKeys: parentKeys(read) }
}

function parentKeys(read: BoundCollectionRead): string[] {
  return read.parent ? [read.parent.key] : []
}

function planEntity(read: BoundEntityRead, limits: ReadPlanLimits): PlannedEntity {
  return { read, expands: read.expand.map((expand) => planExpand(expand, limits)) }
}

function planExpand(expand: BoundExpand, limits: ReadPlanLimits): PlannedExpand {
  const entity = planEntity(expand.read, limits)
  if (expand.navigation.kind === 'reference') return { expand, entity, order: [], page: { offset: 0 }, count: false }
  return { expand, entity, order: sortKeys(expand.orderby, expand.read.range), page: { limit: expand.top, offset: expand.skip ?? 0 }, count: expand.count }
}

/** The client's order with OData's null order (nulls first ascending), then the key unless the order is already total. */
function sortKeys(orderby: readonly BoundOrderby[], range: Range): SortKey[] {
  const keys: SortKey[] = orderby.map(({ expression, descending }) => ({ expression, descending, nulls: canBeNull(expression) ? nullsOf(descending) : undefined }))
  if (!isTotalOrder(orderby, range.entity)) keys.push({ expression: keyOf(range), descending: false })
  return keys
}

/**
 * The order of what $apply produced, total so that paging is stable: entities (nothing
 * aggregated them) sort as any read does, their key last; aggregated rows are unique by their
 * grouping properties, which break the ties (a single aggregate row needs none). Without
 * $orderby, the pipeline's own orderby() comes first.
 */
function appliedOrder(read: BoundCollectionRead): SortKey[] {
  const stages = read.apply!
  const aggregate = stages.find((stage) => stage.kind === 'aggregate')
  if (!aggregate) return sortKeys(read.orderby, read.read.range)
  const pipelineOrder = stages.findLast((stage) => stage.kind === 'orderby')
  const orderby = read.orderby.length > 0 ? read.orderby : (pipelineOrder?.items ?? [])
  const keys: SortKey[] = orderby.map(({ expression, descending }) => ({ expression, descending, nulls: nullsOf(descending) }))
  const ordered = new Set(orderby.flatMap(({ expression }) => (expression.kind === 'aggregateRef' ? [expression.name] : [])))
  for (const group of aggregate.groupBy) {
    const name = group.path.join('/')
    if (ordered.has(name)) continue
    keys.push({ expression: { kind: 'aggregateRef', name, type: group.expression.type, origin: group.expression }, descending: false, nulls: nullsOf(false) })
  }
  return keys
}

function nullsOf(descending: boolean): 'first' | 'last' {
  return descending ? 'last' : 'first'
}

function canBeNull(expression: BoundExpression): boolean {
  return !(expression.kind === 'property' && expression.via.length === 0 && (expression.property.decl.required || expression.property.name === KEY))
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

function keyOf(range: Range): BoundExpression {
  return { kind: 'property', range, via: [], property: range.entity.properties.get(KEY) as ScalarProperty, type: 'guid' }
}
