// Binds the query options of a read to the model: $select/$expand (with their nested
// options), $filter, $orderby, paging and $count, and checks the limits:
//   MaxTop (a $top above it), MaxExpansionDepth (nested $expand), MaxNodeCount (see countNodes).

import { QueryError } from '../../errors.ts'
import type { CollectionProperty, EntityModel, ReferenceProperty, ScalarProperty } from '../../model/model.ts'
import { KEY, searchableProperties } from '../../model/model.ts'
import type {
  ComputeItemSyntax,
  ExpandItemSyntax,
  ExpandOptionsSyntax,
  OrderbyItemSyntax,
  QueryOptionsSyntax,
  SearchSyntax,
  SelectItemSyntax,
} from '../parser/syntax.ts'
import type { BoundCollectionRead, BoundComputedItem, BoundEntityByKey, BoundEntityRead, BoundExpand, BoundExpression, BoundOrderby, BoundSearch, BoundSelectItem, Range } from './bound.ts'
import type { Target } from './bind-path.ts'
import { publicProperties, resolveProperty, withoutTypeCasts, type BindContext } from './bind-context.ts'
import { bindCondition, bindValue, type ExpressionScope } from './bind-expression.ts'
import { bindApply } from './bind-apply.ts'
import { DEFAULT_NAMESPACE } from '../metadata/build-csdl.ts'

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
  const forCollections = collectionOptionsIn(options)
  if (forCollections.length > 0) throw QueryError.invalid(`${forCollections[0]}: ${COLLECTION_OPTIONS} apply to collections, not to a single entity.`, forCollections[0])
  const range = context.nextRange(target.entity)
  const computed = bindCompute(context, { it: range, variables: new Map(), option: '$compute' }, options.compute)
  return {
    kind: 'entity',
    entity: target.entity,
    key: target.key,
    parent: target.parent,
    read: bindEntityRead(context, range, options.select, options.expand, defaultSelect, 1, range, computed),
  }
}

export function bindCollectionRead(
  context: BindContext,
  entity: EntityModel,
  options: QueryOptionsSyntax,
  defaultSelect: DefaultSelect,
): BoundCollectionRead {
  const range = context.nextRange(entity)
  if (options.compute && options.apply) throw QueryError.invalid('$compute cannot be combined with $apply: compute inside it, as in $apply=compute(Price mul 2 as Double).', '$compute')
  const computed = bindCompute(context, { it: range, variables: new Map(), option: '$compute' }, options.compute)
  const scope: ExpressionScope = { it: range, variables: new Map(), option: '$filter', computed }
  if (options.top !== undefined && options.top > context.limits.maxTop) {
    throw QueryError.limitExceeded('MaxTop', options.top, context.limits.maxTop)
  }
  const apply = options.apply && bindApply(context, range, options.apply)
  if (apply && (options.select || options.expand)) {
    throw QueryError.invalid('$select and $expand cannot be combined with $apply: the aggregation defines the result shape.')
  }
  const skip = options.skiptoken !== undefined ? parseSkiptoken(options.skiptoken) : (options.skip ?? 0)
  const read = bindEntityRead(context, range, options.select, options.expand, defaultSelect, 1, range, computed)
  const search = options.search && bindSearch(range, options.search)
  // After $apply, $filter and $orderby name what it produced: the aggregated rows' names, or
  // the entities with the aliases compute() added to them.
  const applied: Partial<ExpressionScope> = apply ? (apply.names ? { applied: apply.names } : { computed: apply.computed }) : {}
  const filter = options.filter && bindCondition(context, { ...scope, ...applied }, options.filter)
  const orderScope: ExpressionScope = { ...scope, ...applied, option: '$orderby' }
  return {
    kind: 'collection',
    entity,
    read,
    // After $apply, $filter and $orderby see what it produced (Data Aggregation 3.3); $search
    // looks at the entities, so with $apply it is the pipeline's first step.
    filter: search && !apply ? both(search, filter) : filter,
    orderby: bindOrderby(context, orderScope, options.orderby),
    top: options.top,
    skip,
    count: options.count ?? false,
    apply: apply && search ? [{ kind: 'filter', predicate: search }, ...apply.stages] : apply?.stages,
  }
}

/** The options only a collection takes, as an error message lists them. */
export const COLLECTION_OPTIONS = '$filter, $orderby, $top, $skip, $count, $search, $skiptoken and $apply'

/**
 * The query options given that only a collection takes, as the request names them. A request
 * for one entity giving any of them is refused, not answered as if it were absent: the client
 * asked for something (a count, a search) it would silently not get (URL Conventions 5.1).
 */
export function collectionOptionsIn(options: QueryOptionsSyntax): string[] {
  const given: Array<[string, unknown]> = [
    ['$filter', options.filter], ['$orderby', options.orderby], ['$top', options.top], ['$skip', options.skip],
    ['$count', options.count], ['$search', options.search], ['$skiptoken', options.skiptoken], ['$apply', options.apply],
  ]
  return given.filter(([, value]) => value !== undefined).map(([name]) => name)
}

/**
 * `$search=…`: a condition on the entity's full-text column, which exists only when its
 * plugin marks properties searchable (`p.text().searchable()`); otherwise 400 naming it.
 */
export function bindSearch(range: Range, search: SearchSyntax): BoundSearch {
  if (searchableProperties(range.entity).length === 0) {
    throw QueryError.invalid(`$search: ${range.entity.setName} has no searchable properties; its plugin marks them with .searchable().`, range.entity.setName)
  }
  return { kind: 'search', range, search, type: 'boolean' }
}

function both(left: BoundExpression, right: BoundExpression | undefined): BoundExpression {
  return right ? { kind: 'binary', op: 'and', left, right, type: 'boolean' } : left
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
  /** The entity's `$compute` aliases (bindCompute), selectable like properties. */
  computed?: ReadonlyMap<string, BoundExpression>,
): BoundEntityRead {
  const entity = range.entity
  const chosen = new Map<string, ScalarProperty>()
  const add = (property: ScalarProperty) => chosen.set(property.name, property)
  const all = () => {
    for (const property of entity.properties.values()) if (property.kind === 'scalar') add(property)
  }
  add(entity.properties.get(KEY) as ScalarProperty)
  const { own, expands } = selectThroughNavigations(context, entity, select, expand)
  // Without $select, every computed value is in the answer: the client asked for it by name.
  const computedItems: BoundComputedItem[] = own ? [] : [...(computed ?? [])].map(([alias, expression]) => ({ alias, expression }))
  const operations = new Set<string>()
  if (!own) {
    if (defaultSelect === 'All') all()
  } else {
    for (const item of own) {
      if (item.kind === 'selectAll') all()
      else if (item.kind === 'selectOperations') {
        if (item.namespace === DEFAULT_NAMESPACE) for (const name of instanceMethods(entity)) operations.add(name)
      } else if (item.path.length === 1 && computed?.has(item.path[0])) computedItems.push({ alias: item.path[0], expression: computed.get(item.path[0])! })
      else if (item.path.length === 1 && item.path[0].startsWith(`${DEFAULT_NAMESPACE}.`)) {
        // A bound operation by its qualified name (URL Conventions 4.01 §5.1.3); one that cannot
        // be bound to these entities is ignored, as the specification asks.
        const name = item.path[0].slice(DEFAULT_NAMESPACE.length + 1)
        const method = instanceMethods(entity).find((method) => context.naming.toPublic(method) === name)
        if (method) operations.add(method)
      }
      else {
        if (item.path.length > 1) {
          throw QueryError.invalid(`$select=${item.path.join('/')}: ${entity.setName}.${item.path[0]} is not a navigation property, so '${item.path.slice(0, 2).join('/')}' cannot follow it.`, item.path[0])
        }
        const property = resolveProperty(context, entity, item.path[0])
        // A navigation property in $select names its link, not data (OData 4.01 URL Conventions
        // 5.1.3): its entities are in the answer when $expand asks for them, as without it. The
        // SAP Cloud SDK's v4 client selects one so (`select(Customers.ORDERS)`).
        if (property.kind !== 'scalar') continue
        add(property)
      }
    }
  }
  const selectItems: BoundSelectItem[] = []
  const virtuals: BoundSelectItem[] = []
  const needs = new Map<string, BoundSelectItem>()
  const navigationNeeds = new Map<string, { navigation: ReferenceProperty | CollectionProperty; properties: Map<string, ScalarProperty> }>()
  for (const property of chosen.values()) {
    const item = { property, publicName: context.naming.toPublic(property.name) }
    if (property.column) selectItems.push(item)
    else {
      virtuals.push(item)
      for (const source of entity.rules.computed.get(property.name)?.from ?? []) {
        const [head, tail] = source.split('.')
        const dependency = entity.properties.get(head)
        if (dependency?.kind === 'scalar' && dependency.column && !chosen.has(source)) {
          needs.set(source, { property: dependency, publicName: context.naming.toPublic(dependency.name) })
        }
        if (!dependency || dependency.kind === 'scalar') continue
        let need = navigationNeeds.get(head)
        if (!need) navigationNeeds.set(head, (need = { navigation: dependency, properties: new Map([[KEY, dependency.target.properties.get(KEY) as ScalarProperty]]) }))
        const read = tail ? dependency.target.properties.get(tail) : undefined
        if (read?.kind === 'scalar' && read.column) need.properties.set(tail, read)
      }
    }
  }
  return {
    range,
    select: selectItems,
    virtuals,
    needs: [...needs.values()],
    ...(navigationNeeds.size ? { navigationNeeds: [...navigationNeeds.values()].map(({ navigation, properties }) => ({ navigation, properties: [...properties.values()] })) } : {}),
    expand: bindExpands(context, entity, expands, defaultSelect, depth, root),
    etag: true,
    ...(computedItems.length ? { computed: computedItems } : {}),
    ...(operations.size ? { operations: [...operations] } : {}),
  }
}

/** The methods bound to one entity of the type (not to its collection). */
function instanceMethods(entity: EntityModel): string[] {
  return [...entity.methods].filter(([, method]) => !method.static).map(([name]) => name)
}

/**
 * `$compute=Price mul Quantity as Amount,…` (OData 4.01 URL Conventions 5.1.5): each alias
 * bound against the entity, in order (a later item may use an earlier alias). The names then
 * serve $select, $filter and $orderby, which replace an alias by its expression.
 */
export function bindCompute(context: BindContext, scope: ExpressionScope, items: readonly ComputeItemSyntax[] | undefined): ReadonlyMap<string, BoundExpression> | undefined {
  if (!items) return undefined
  const computed = new Map<string, BoundExpression>()
  const properties = publicProperties(scope.it.entity, context.naming)
  for (const item of items) {
    if (properties.has(item.alias) || computed.has(item.alias)) {
      throw QueryError.invalid(`$compute: '${item.alias}' is already a name of ${scope.it.entity.setName}; choose another alias.`, item.alias)
    }
    const expression = bindValue(context, { ...scope, computed }, item.expression)
    if (expression.kind === 'referenceKey') throw QueryError.invalid(`$compute: ${item.alias} must be a value, not a navigation property.`, item.alias)
    computed.set(item.alias, expression)
  }
  return computed
}

/** `$select=entityctl.Order/Number` as `$select=Number`; a path of casts alone stays, for binding to refuse. */
function withoutSelectCasts(context: BindContext, entity: EntityModel, item: SelectItemSyntax): SelectItemSyntax {
  if (item.kind !== 'selectPath' || item.path.length < 2) return item
  const path = withoutTypeCasts(context, entity, item.path, `$select=${item.path.join('/')}:`)
  return path.length > 0 ? { ...item, path } : item
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
  for (const item of (select ?? []).map((written) => withoutSelectCasts(context, entity, written))) {
    const navigation = item.kind === 'selectPath' && item.path.length > 1 && publicProperties(entity, context.naming).get(item.path[0])
    if (!navigation || navigation.kind === 'scalar') {
      own.push(item)
      continue
    }
    if (!through.has(item.path[0])) through.set(item.path[0], [])
    through.get(item.path[0])!.push({ ...item, path: item.path.slice(1) })
  }
  if (through.size === 0) return { own: select && own, expands: expand ?? [] }
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
  // Orders/$ref, */$ref (OData 4.01 11.2.5.2.1): the related entities as their ids alone.
  const asReferences = (expand: BoundExpand): BoundExpand => ({ ...expand, read: { ...expand.read, select: [], virtuals: [], needs: [], expand: [], etag: false, ref: true } })
  for (const item of ordered) {
    if (item.kind === 'expandAll') {
      for (const property of entity.properties.values()) {
        const name = context.naming.toPublic(property.name)
        if (property.kind === 'scalar' || expanded.has(name)) continue
        // `*($levels=2)` recurses where a navigation is recursive and expands the others once.
        const levels = property.target === entity ? item.levels : undefined
        const expand = bindExpand(context, name, entity, {}, defaultSelect, depth, levels, root)
        once(item.ref ? asReferences(expand) : expand)
      }
      continue
    }
    const path = withoutTypeCasts(context, entity, item.path, `$expand=${item.path.join('/')}:`)
    if (path.length > 1) throw QueryError.invalid(`$expand=${item.path.join('/')}: nest it instead, $expand=${path[0]}($expand=${path.slice(1).join('/')}).`)
    const expand = bindExpand(context, path[0], entity, item.options, defaultSelect, depth, item.options.levels, root)
    if (item.suffix === 'ref') {
      once(asReferences(expand))
    } else if (item.suffix === 'count') {
      // Orders/$count: the number of related entities alone, as Orders@odata.count.
      if (expand.navigation.kind !== 'collection') throw QueryError.invalid(`$expand=${item.path[0]}/$count: ${item.path[0]} is a single entity; $count counts collections.`)
      once({ ...expand, read: { ...expand.read, select: [], virtuals: [], needs: [], expand: [] }, count: true, countOnly: true })
    } else {
      once(expand)
    }
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
  const computed = bindCompute(context, { it: range, root, variables: new Map(), option: '$compute' }, options.compute)
  const scope: ExpressionScope = { it: range, root, variables: new Map(), option: '$filter', computed }
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
  const read = bindEntityRead(context, range, options.select, nested, defaultSelect, depth + 1, root, computed)
  if (navigation.kind === 'reference') {
    if (options.filter || options.orderby || options.top !== undefined || options.skip !== undefined || options.count || options.search) {
      throw QueryError.invalid(`$expand=${name}: ${name} is a single entity; $filter, $search, $orderby, $top, $skip and $count apply to collections only.`)
    }
    return { navigation, publicName: context.naming.toPublic(navigation.name), read, orderby: [], count: false }
  }
  return {
    navigation,
    publicName: context.naming.toPublic(navigation.name),
    read,
    filter: options.search ? both(bindSearch(range, options.search), options.filter && bindCondition(context, scope, options.filter)) : options.filter && bindCondition(context, scope, options.filter),
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
    const expression = bindValue(context, scope, item.expression)
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
