// Binds the query options of a read to the model: $select/$expand (with their nested
// options), $filter, $orderby, paging and $count, and checks the limits:
//   MaxTop (a $top above it), MaxExpansionDepth (nested $expand), MaxNodeCount (see countNodes).

import { QueryError, ServiceError } from '../../errors.ts'
import type { EntityModel, ScalarProperty } from '../../model/model.ts'
import { KEY } from '../../model/model.ts'
import type {
  ExpandItemSyntax,
  ExpandOptionsSyntax,
  OrderbyItemSyntax,
  QueryOptionsSyntax,
  SelectItemSyntax,
} from '../parser/syntax.ts'
import type { BoundCollectionRead, BoundEntityByKey, BoundEntityRead, BoundExpand, BoundOrderby, BoundSelectItem, Range } from './bound.ts'
import type { Target } from './bind-path.ts'
import { publicProperties, resolveProperty, type BindContext } from './bind-context.ts'
import { bindCondition, bindExpression, type ExpressionScope } from './bind-expression.ts'
import { bindApply } from './bind-apply.ts'

export type DefaultSelect = 'Key' | 'All'

/** A resource path that reads entities: a collection (or its $count), or one entity. */
export type ReadTarget = Extract<Target, { kind: 'collection' | 'entity' }>

/**
 * The read a resource path and its query options ask for:
 *   Orders?$filter=Total gt 100        →  collection of Order, filter Total gt 100
 *   Customers(<key>)/Orders?$top=5     →  collection of Order, parent Customer.Orders = <key>, top 5
 *   Orders(<key>)?$select=Number       →  entity Order <key>, select Guid, Number
 */
export function bindTargetRead(context: BindContext, target: ReadTarget, options: QueryOptionsSyntax, defaultSelect: DefaultSelect): BoundCollectionRead | BoundEntityByKey {
  if (target.kind === 'collection') return { ...bindCollectionRead(context, target.entity, options, defaultSelect), parent: target.parent }
  if (options.filter || options.orderby || options.top !== undefined || options.skip !== undefined || options.apply) {
    throw QueryError.invalid('$filter, $orderby, $top, $skip and $apply apply to collections, not to a single entity.')
  }
  return {
    kind: 'entity',
    entity: target.entity,
    key: target.key,
    parent: target.parent,
    read: bindEntityRead(context, context.nextRange(target.entity), options.select, options.expand, defaultSelect, 1),
  }
}

export function bindCollectionRead(
  context: BindContext,
  entity: EntityModel,
  options: QueryOptionsSyntax,
  defaultSelect: DefaultSelect,
): BoundCollectionRead {
  if (options.compute) throw new ServiceError('NotImplemented', '$compute is not supported; compute values inside $apply, as in $apply=compute(Price mul 2 as Double).', { target: '$compute' })
  const range = context.nextRange(entity)
  const scope: ExpressionScope = { it: range, variables: new Map(), option: '$filter' }
  if (options.top !== undefined && options.top > context.limits.maxTop) {
    throw QueryError.limitExceeded('MaxTop', options.top, context.limits.maxTop)
  }
  const apply = options.apply && bindApply(context, range, options.apply)
  if (apply && (options.select || options.expand)) {
    throw QueryError.invalid('$select and $expand cannot be combined with $apply: the aggregation defines the result shape.')
  }
  const skip = options.skiptoken !== undefined ? parseSkiptoken(options.skiptoken) : (options.skip ?? 0)
  const orderScope: ExpressionScope = { ...scope, option: '$orderby', applied: apply?.names }
  return {
    kind: 'collection',
    entity,
    read: bindEntityRead(context, range, options.select, options.expand, defaultSelect, 1),
    // After $apply, $filter and $orderby see what it produced (Data Aggregation 3.3).
    filter: options.filter && bindCondition(context, { ...scope, applied: apply?.names }, options.filter),
    orderby: bindOrderby(context, orderScope, options.orderby),
    top: options.top,
    skip,
    count: options.count ?? false,
    apply: apply?.stages,
  }
}

export function bindEntityRead(
  context: BindContext,
  range: Range,
  select: readonly SelectItemSyntax[] | undefined,
  expand: readonly ExpandItemSyntax[] | undefined,
  defaultSelect: DefaultSelect,
  depth: number,
  /** `$it` in nested options: the instance of the collection the resource path reads. */
  root: Range = range,
): BoundEntityRead {
  const entity = range.entity
  const chosen = new Map<string, ScalarProperty>()
  const add = (property: ScalarProperty) => chosen.set(property.name, property)
  const all = () => {
    for (const property of entity.properties.values()) if (property.kind === 'scalar') add(property)
  }
  add(entity.properties.get(KEY) as ScalarProperty)
  const { own, expands } = selectThroughNavigations(context, entity, select, expand)
  if (!own) {
    if (defaultSelect === 'All') all()
  } else {
    for (const item of own) {
      if (item.kind === 'selectAll') all()
      else if (item.kind === 'selectOperations') continue
      else {
        if (item.path.length > 1) {
          throw QueryError.invalid(`$select=${item.path.join('/')}: ${entity.setName}.${item.path[0]} is not a navigation property, so '${item.path.slice(0, 2).join('/')}' cannot follow it.`, item.path[0])
        }
        const property = resolveProperty(context, entity, item.path[0])
        if (property.kind !== 'scalar') {
          throw QueryError.invalid(`$select=${item.path[0]}: ${entity.setName}.${item.path[0]} is a navigation property; use $expand=${item.path[0]}.`, item.path[0])
        }
        add(property)
      }
    }
  }
  const selectItems: BoundSelectItem[] = []
  const virtuals: BoundSelectItem[] = []
  const needs = new Map<string, BoundSelectItem>()
  for (const property of chosen.values()) {
    const item = { property, publicName: context.naming.toPublic(property.name) }
    if (property.column) selectItems.push(item)
    else {
      virtuals.push(item)
      for (const source of entity.rules.computed.get(property.name)?.from ?? []) {
        const dependency = entity.properties.get(source)
        if (dependency?.kind === 'scalar' && dependency.column && !chosen.has(source)) {
          needs.set(source, { property: dependency, publicName: context.naming.toPublic(dependency.name) })
        }
      }
    }
  }
  return {
    range,
    select: selectItems,
    virtuals,
    needs: [...needs.values()],
    expand: bindExpands(context, entity, expands, defaultSelect, depth, root),
    etag: true,
  }
}

/**
 * `$select=Name,Manager/Name`: a path through a navigation selects inside it, as
 * `$expand=Manager($select=Name)` would; with `$expand=Manager` also given, it restricts that
 * expansion. Returns the entity's own select items and the expand items to bind.
 */
function selectThroughNavigations(
  context: BindContext,
  entity: EntityModel,
  select: readonly SelectItemSyntax[] | undefined,
  expand: readonly ExpandItemSyntax[] | undefined,
): { own: readonly SelectItemSyntax[] | undefined; expands: readonly ExpandItemSyntax[] } {
  const through = new Map<string, SelectItemSyntax[]>()
  const own: SelectItemSyntax[] = []
  for (const item of select ?? []) {
    const navigation = item.kind === 'selectPath' && item.path.length > 1 && publicProperties(entity, context.naming).get(item.path[0])
    if (!navigation || navigation.kind === 'scalar') {
      own.push(item)
      continue
    }
    if (!through.has(item.path[0])) through.set(item.path[0], [])
    through.get(item.path[0])!.push({ ...item, path: item.path.slice(1) })
  }
  if (through.size === 0) return { own: select, expands: expand ?? [] }
  const expands = (expand ?? []).map((item) => {
    const paths = item.kind === 'expandPath' && item.path.length === 1 ? through.get(item.path[0]) : undefined
    if (!paths || item.kind !== 'expandPath') return item
    through.delete(item.path[0])
    return { ...item, options: { ...item.options, select: [...(item.options.select ?? []), ...paths] } }
  })
  for (const [name, paths] of through) {
    expands.push({ kind: 'expandPath', path: [name], suffix: undefined, options: { select: paths }, position: paths[0].position })
  }
  // With only navigation paths selected, `own` is empty: the entity answers with its key alone.
  return { own, expands }
}

function bindExpands(
  context: BindContext,
  entity: EntityModel,
  items: readonly ExpandItemSyntax[],
  defaultSelect: DefaultSelect,
  depth: number,
  root: Range,
): BoundExpand[] {
  if (items.length > 0 && depth > context.limits.maxExpansionDepth) {
    throw QueryError.limitExceeded('MaxExpansionDepth', depth, context.limits.maxExpansionDepth)
  }
  const expands: BoundExpand[] = []
  const expanded = new Set<string>()
  const once = (expand: BoundExpand) => {
    // Each navigation is one member of the entity's JSON: expanding it twice has no meaning.
    if (expanded.has(expand.publicName)) throw QueryError.invalid(`$expand: ${entity.setName}.${expand.publicName} is expanded twice; merge its options into one item.`, expand.publicName)
    expanded.add(expand.publicName)
    expands.push(expand)
  }
  // Named items first, so `*,Manager($select=Name)` expands Manager as written and `*` the rest.
  const ordered = [...items.filter((i) => i.kind !== 'expandAll'), ...items.filter((i) => i.kind === 'expandAll')]
  for (const item of ordered) {
    if (item.kind === 'expandAll') {
      for (const property of entity.properties.values()) {
        const name = context.naming.toPublic(property.name)
        if (property.kind === 'scalar' || expanded.has(name)) continue
        // `*($levels=2)` recurses where a navigation is recursive and expands the others once.
        const levels = property.target === entity ? item.levels : undefined
        once(bindExpand(context, name, entity, {}, defaultSelect, depth, levels, root))
      }
      continue
    }
    if (item.suffix) throw QueryError.invalid(`$expand=${item.path.join('/')}/$${item.suffix} is not supported; expand the navigation itself.`)
    if (item.path.length > 1) throw QueryError.invalid(`$expand=${item.path.join('/')}: nest it instead, $expand=${item.path[0]}($expand=${item.path.slice(1).join('/')}).`)
    once(bindExpand(context, item.path[0], entity, item.options, defaultSelect, depth, item.options.levels, root))
  }
  return expands
}

function bindExpand(
  context: BindContext,
  name: string,
  entity: EntityModel,
  options: ExpandOptionsSyntax,
  defaultSelect: DefaultSelect,
  depth: number,
  levels: number | 'max' | undefined,
  root: Range,
): BoundExpand {
  const navigation = resolveNavigation(context, entity, name)
  if (!navigation) throw QueryError.invalid(`$expand: ${entity.setName}.${name} is not a navigation property.`, name)
  if (options.top !== undefined && options.top > context.limits.maxTop) throw QueryError.limitExceeded('MaxTop', options.top, context.limits.maxTop)
  const range = context.nextRange(navigation.target)
  // Unqualified names are the expanded entity's; $it stays the resource path's instance
  // (OData 4.01 URL Conventions 5.1.1.12.3: Customers?$expand=Orders($filter=$it/City eq ShipTo/City)).
  const scope: ExpressionScope = { it: range, root, variables: new Map(), option: '$filter' }
  let nested = options.expand
  if (levels !== undefined) {
    // $levels on a recursive navigation (Role/Children): expand the same navigation again.
    if (navigation.target !== entity) throw QueryError.invalid(`$levels needs a recursive navigation; ${entity.setName}.${name} leads to ${navigation.target.setName}.`)
    const remaining = levels === 'max' ? context.limits.maxExpansionDepth - depth : levels - 1
    if (typeof levels === 'number' && depth + levels - 1 > context.limits.maxExpansionDepth) {
      throw QueryError.limitExceeded('MaxExpansionDepth', depth + levels - 1, context.limits.maxExpansionDepth)
    }
    if (remaining > 0) nested = [...(nested ?? []), { kind: 'expandPath', path: [name], suffix: undefined, options: { ...options, levels: remaining }, position: 0 }]
  }
  const read = bindEntityRead(context, range, options.select, nested, defaultSelect, depth + 1, root)
  if (navigation.kind === 'reference') {
    if (options.filter || options.orderby || options.top !== undefined || options.skip !== undefined || options.count) {
      throw QueryError.invalid(`$expand=${name}: ${name} is a single entity; $filter, $orderby, $top, $skip and $count apply to collections only.`)
    }
    return { navigation, publicName: context.naming.toPublic(navigation.name), read, orderby: [], count: false }
  }
  return {
    navigation,
    publicName: context.naming.toPublic(navigation.name),
    read,
    filter: options.filter && bindCondition(context, scope, options.filter),
    orderby: bindOrderby(context, { ...scope, option: '$orderby' }, options.orderby),
    top: options.top,
    skip: options.skip,
    count: options.count ?? false,
  }
}

function resolveNavigation(context: BindContext, entity: EntityModel, name: string) {
  const property = publicProperties(entity, context.naming).get(name)
  if (!property) throw QueryError.unknownProperty(entity.setName, name, publicProperties(entity, context.naming).keys())
  return property.kind === 'scalar' ? undefined : property
}

export function bindOrderby(context: BindContext, scope: ExpressionScope, items: readonly OrderbyItemSyntax[] | undefined): BoundOrderby[] {
  return (items ?? []).map((item) => {
    const expression = bindExpression(context, scope, item.expression)
    if (expression.type === 'boolean' && expression.kind !== 'property') {
      throw QueryError.invalid('$orderby needs values to sort by, not a condition.')
    }
    if (expression.kind === 'referenceKey') {
      const name = expression.reference.name
      throw QueryError.invalid(`${scope.option}: ${expression.reference.entity.setName}.${name} is a navigation property; sort by one of its properties, as in ${name}/Title.`, name)
    }
    return { expression, descending: item.direction === 'desc' }
  })
}

function parseSkiptoken(token: string): number {
  const skip = Number(token)
  if (!Number.isInteger(skip) || skip < 0) throw QueryError.invalid(`$skiptoken '${token}' is not one this service issued.`, '$skiptoken')
  return skip
}
