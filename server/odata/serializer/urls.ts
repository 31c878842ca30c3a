// URLs the responses carry: the service root and @odata.context, the same for a read and for a
// write or method answering with what a read of the same shape would.
//   Orders?$select=Number,Total  →  http://host/api/$metadata#Orders(Number,Total)

import type { EntityModel } from '../../model/model.ts'
import type { ComputeItemSyntax, ExpandItemSyntax, SelectItemSyntax } from '../parser/syntax.ts'
import type { BoundApplyStage, BoundEntityRead } from '../semantic/bound.ts'

/** The service root of a request: Server:PublicUrl when configured, else the host it was sent to. */
export function serviceRoot(ctx: { readonly protocol: string; readonly host: string }, services: { readonly config: { readonly Server: { readonly PublicUrl?: string } } }): string {
  const configured = services.config.Server.PublicUrl
  return `${configured ? configured.replace(/\/$/, '') : `${ctx.protocol}://${ctx.host}`}/api/`
}

/** `$metadata#Customers(Name,Orders(Number))[/$entity]` (after the service root); no list when `projection` is empty. */
export function projectedContextPath(entity: EntityModel, projection: readonly string[], single = false): string {
  return `$metadata#${entity.setName}${projection.length ? `(${projection.join(',')})` : ''}${single ? '/$entity' : ''}`
}

/**
 * The select list of a read's context URL (OData 4.01 Protocol 10.9): the selected properties,
 * each expanded navigation with its own list, and without $select the default projection
 * (`key`: the key alone, DefaultSelect Key; undefined: every property, DefaultSelect All).
 * `read` is the bound read of these options: it says which navigations `$expand=*` expanded.
 *   $select=Name&$expand=Orders($select=Number)  →  Name,Orders(Number)
 *   $select=Number,Customer/Name                 →  Number,Customer(Name)
 *   $expand=Orders (DefaultSelect Key)           →  Guid,Orders(Guid)
 *   $expand=* (on Orders)                        →  Guid,Customer(Guid),Lines(Guid)
 */
export function selectList(written: ProjectionOptions, key: string | undefined, read: ExpandedRead): string[] {
  const options = selectingThroughNavigations(written)
  const items = options.expand ?? []
  const named = new Set(items.flatMap((item) => (item.kind === 'expandPath' ? [expandedName(item.path)] : [])))
  // `*` expands each navigation not named beside it, as naming it alone would.
  const all = items.some((item) => item.kind === 'expandAll' && !item.ref) ? read.expand.filter((expand) => !named.has(expand.publicName)) : []
  const expanded = [
    ...items.flatMap((item) => {
      if (item.kind !== 'expandPath' || item.suffix) return []
      const name = expandedName(item.path)
      const nested = read.expand.find((expand) => expand.publicName === name)?.read ?? NOTHING_EXPANDED
      return [`${name}(${selectList(item.options, key, nested).join(',')})`]
    }),
    ...all.map((expand) => `${expand.publicName}(${selectList({}, key, expand.read).join(',')})`),
  ]
  // A navigation both selected and expanded is named once, with its list (`Orders(Number)`).
  const expandedPaths = new Set([...items.flatMap((item) => (item.kind === 'expandPath' && !item.suffix ? [expandedName(item.path)] : [])), ...all.map((expand) => expand.publicName)])
  // With only navigation paths selected, the entity's own list is empty: its key alone, which goes without saying.
  if (options.select) return [...selectNames(options.select).filter((name) => !expandedPaths.has(name)), ...expanded]
  // Without $select, the $compute values are in the answer too (bind-read.ts).
  const computed = (options.compute ?? []).map((item) => item.alias)
  if (key !== undefined) return [key, ...computed, ...expanded]
  return computed.length || expanded.length ? ['*', ...computed, ...expanded] : []
}

/**
 * The options as binding reads them (bind-read.ts selectThroughNavigations): a $select path
 * through a navigation selects inside its expansion, which the answer carries whether or not
 * $expand names it, so the context URL names it as an expansion too.
 *   $select=Number,Customer/Name&$expand=Customer  →  $select=Number&$expand=Customer($select=Name)
 */
function selectingThroughNavigations(options: ProjectionOptions): ProjectionOptions {
  const through = new Map<string, SelectItemSyntax[]>()
  const own: SelectItemSyntax[] = []
  for (const item of options.select ?? []) {
    const path = item.kind === 'selectPath' && item.path.length > 1 ? item.path.filter((segment) => !segment.includes('.')) : []
    if (item.kind !== 'selectPath' || path.length < 2) {
      own.push(item)
      continue
    }
    if (!through.has(path[0])) through.set(path[0], [])
    through.get(path[0])!.push({ ...item, path: path.slice(1) })
  }
  if (through.size === 0) return options
  const expand = (options.expand ?? []).map((item) => {
    const paths = item.kind === 'expandPath' && item.path.length === 1 ? through.get(item.path[0]) : undefined
    if (!paths || item.kind !== 'expandPath') return item
    through.delete(item.path[0])
    return { ...item, options: { ...item.options, select: [...(item.options.select ?? []), ...paths] } }
  })
  for (const [name, paths] of through) expand.push({ kind: 'expandPath', path: [name], suffix: undefined, options: { select: paths }, position: paths[0].position })
  return { ...options, select: own, expand }
}

/** What the context URL needs of a bound read: the navigations it expands. */
type ExpandedRead = Pick<BoundEntityRead, 'expand'>
const NOTHING_EXPANDED: ExpandedRead = { expand: [] }

/** An expanded navigation as the answer names it: its type casts (`Customer/entityctl.Customer`) bound to the type they follow, so they change nothing. */
function expandedName(path: readonly string[]): string {
  return path.filter((segment) => !segment.includes('.')).join('/')
}

/** The options that shape an entity, at the top level or in $expand. */
interface ProjectionOptions {
  readonly select?: readonly SelectItemSyntax[]
  readonly expand?: readonly ExpandItemSyntax[]
  readonly compute?: readonly ComputeItemSyntax[]
}

/** The selected names; like an expanded one, a path without the type casts that change nothing (`entityctl.Order/Number`). */
function selectNames(select: readonly SelectItemSyntax[]): string[] {
  return select.map((item) => (item.kind === 'selectAll' ? '*' : item.kind === 'selectPath' ? (item.path.length > 1 ? expandedName(item.path) : item.path[0]) : `${item.namespace}.*`))
}

/**
 * The select list of an aggregated read (OData Data Aggregation 3.x): the grouping
 * properties (nested as the answer nests them) and the aggregated and computed aliases.
 *   groupby((Customer/Country),aggregate(Total with sum as Revenue))  →  Customer(Country),Revenue
 */
export function applyList(stages: readonly BoundApplyStage[], key: string): string[] {
  const aggregate = stages.find((stage) => stage.kind === 'aggregate')
  if (!aggregate) return [key, ...stages.flatMap((stage) => (stage.kind === 'compute' ? stage.items.map((item) => item.alias) : []))]
  interface Node { readonly children: Map<string, Node> }
  const root: Node = { children: new Map() }
  for (const group of aggregate.groupBy) {
    let node = root
    for (const segment of group.path) {
      if (!node.children.has(segment)) node.children.set(segment, { children: new Map() })
      node = node.children.get(segment)!
    }
  }
  const write = (node: Node): string[] => [...node.children].map(([name, child]) => (child.children.size ? `${name}(${write(child).join(',')})` : name))
  return [...write(root), ...aggregate.aggregations.map((aggregation) => aggregation.alias)]
}
