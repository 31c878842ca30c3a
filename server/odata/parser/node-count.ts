// Counts the nodes of a parsed query, for MaxNodeCount (ApiOptions, default 100), which the
// binder enforces. What counts as one node:
//   - every expression node (literal, alias, operator, call, type name, lambda, $count, list),
//     except that a member path counts one per segment (`Customer/Name` is 2, as odata.net's
//     bound tree has a node per navigation) and a list counts once, however many values it holds
//     (`Guid in (…500 keys…)` costs one parameter array, not 500 nodes);
//   - every $orderby item, $select item, $expand item and $compute item;
//   - every $apply transformation and every aggregation inside one;
//   - every parameter alias value, once, where it is declared;
//   - a parameter alias (`@p`) or a $compute alias (`Amount`, also one of $apply's compute())
//     named in an expression, as the whole expression it stands for, each time it is named.
// $top, $skip, $count, $levels and the like count nothing.
//
// Aliases count as what they bind to because the binder puts the value in place of each name
// and the SQL compiler writes it out each time: `@a=concat(@b,@b)&@b=concat(@c,@c)&…`, or
// `$compute=concat(Name,Name) as A0,concat(A0,A0) as A1,…`, is a few hundred characters that
// double with each alias (twenty of them held the event loop for seconds and PostgreSQL for the
// whole statement timeout). An alias whose value names itself, directly or through others, could
// never be bound at all (it overflowed the stack, a 500): it is refused here, 400 InvalidQuery.
//
// The same walk measures the deepest expression tree. The parser bounds nesting, not chains
// (`a or b or …`, read in a loop), and a chain is as deep as it is long; the binder and the SQL
// compiler recurse over the tree, so its depth is bounded too (MAX_TREE_DEPTH), checked after
// MaxNodeCount: with the default MaxNodeCount only an administrator's larger one reaches it. An
// alias is as deep where it is named as its value is.

import { QueryError } from '../../errors.ts'
import { countSearchNodes } from './search-parser.ts'
import type {
  ApplyTransformationSyntax,
  ComputeItemSyntax,
  ExpandItemSyntax,
  ExpandOptionsSyntax,
  ExpressionSyntax,
  OrderbyItemSyntax,
  QueryOptionsSyntax,
  SelectItemSyntax,
} from './syntax.ts'

/** Deepest expression tree a request may hold: the binder overflowed the stack near 4000. */
export const MAX_TREE_DEPTH = 1000

export interface QuerySize {
  readonly nodes: number
  /** Depth of the deepest expression (a literal is 1, `a eq 1` is 2). */
  readonly depth: number
}

export function measureQuery(options: QueryOptionsSyntax): QuerySize {
  const measure = new Measure(options.aliases)
  // compute() aliases of $apply are named by $filter and $orderby too: measured first.
  let nodes = options.apply ? measure.transformations(options.apply) : 0
  nodes += measure.options(options)
  for (const value of options.aliases.values()) nodes += measure.expression(value)
  return { nodes, depth: measure.depth }
}

export function countNodes(options: QueryOptionsSyntax): number {
  return measureQuery(options).nodes
}

export function countExpressionNodes(expression: ExpressionSyntax): number {
  return new Measure(new Map()).expression(expression)
}

/** What a parameter alias's value measures while it is being measured: naming it again is a loop. */
const MEASURING = 'measuring'

class Measure {
  depth = 0
  /** The $compute (and compute()) aliases in scope, each as what its expression measures. */
  #computed = new Map<string, QuerySize>()

  readonly #aliases: ReadonlyMap<string, ExpressionSyntax>
  /** Each parameter alias's value, measured once and shared by every Measure of the query. */
  readonly #aliasSizes: Map<string, QuerySize | typeof MEASURING>

  constructor(aliases: ReadonlyMap<string, ExpressionSyntax>, aliasSizes = new Map<string, QuerySize | typeof MEASURING>()) {
    this.#aliases = aliases
    this.#aliasSizes = aliasSizes
  }

  /** An expression on its own: its nodes and depth, the aliases in scope here in scope there. */
  #measured(expression: ExpressionSyntax): QuerySize {
    const measure = new Measure(this.#aliases, this.#aliasSizes)
    measure.#computed = this.#computed
    const nodes = measure.expression(expression)
    return { nodes, depth: measure.depth }
  }

  /** A parameter alias's value; undefined when the query gives none (null: one node) or only another alias (the binder refuses it). */
  #alias(name: string): QuerySize | undefined {
    const known = this.#aliasSizes.get(name)
    if (known === MEASURING) throw QueryError.invalid(`Parameter alias ${name} names itself in its value, directly or through other aliases; it has no value.`, name)
    if (known) return known
    const value = this.#aliases.get(name)
    if (!value || value.kind === 'alias') return undefined
    this.#aliasSizes.set(name, MEASURING)
    const size = this.#measured(value)
    this.#aliasSizes.set(name, size)
    return size
  }

  /** Adds a named alias at `level`: its value's depth below that level. */
  #named(size: QuerySize, level: number): number {
    this.depth = Math.max(this.depth, level - 1 + size.depth)
    return size.nodes
  }

  /** Without recursion: a chain of thousands of operators is a tree thousands deep. */
  expression(root: ExpressionSyntax): number {
    let count = 0
    const pending: [ExpressionSyntax, number][] = [[root, 1]]
    while (pending.length > 0) {
      const [expression, level] = pending.pop()!
      if (level > this.depth) this.depth = level
      const below = level + 1
      switch (expression.kind) {
        case 'alias': {
          const size = this.#alias(expression.name)
          count += size ? this.#named(size, level) : 1
          break
        }
        case 'literal':
        case 'typeName':
        case 'list':
          count += 1
          break
        case 'member': {
          const computed = expression.path.length === 1 ? this.#computed.get(expression.path[0]) : undefined
          count += computed ? this.#named(computed, level) : expression.path.length
          break
        }
        case 'binary':
          count += 1
          pending.push([expression.left, below], [expression.right, below])
          break
        case 'unary':
          count += 1
          pending.push([expression.operand, below])
          break
        case 'call':
          count += 1
          for (const arg of expression.args) pending.push([arg, below])
          break
        case 'lambda':
          count += 1 + expression.collection.path.length
          if (expression.predicate) pending.push([expression.predicate, below])
          break
        case 'count':
          count += 1 + expression.collection.path.length
          if (expression.filter) pending.push([expression.filter, below])
          break
        default:
          expression satisfies never
      }
    }
    return count
  }

  /** The options $expand can nest; the top level shares them. */
  options(options: ExpandOptionsSyntax): number {
    let count = 0
    // Named by $filter, $orderby and $select of the same level: measured first.
    if (options.compute) count += this.compute(options.compute)
    if (options.filter) count += this.expression(options.filter)
    if (options.orderby) count += this.orderby(options.orderby)
    if (options.select) count += this.select(options.select)
    if (options.expand) count += this.expand(options.expand)
    if (options.search) count += countSearchNodes(options.search)
    return count
  }

  orderby(items: readonly OrderbyItemSyntax[]): number {
    let count = 0
    for (const item of items) count += 1 + this.expression(item.expression)
    return count
  }

  select(items: readonly SelectItemSyntax[]): number {
    return items.length
  }

  expand(items: readonly ExpandItemSyntax[]): number {
    let count = 0
    for (const item of items) {
      count += 1
      if (item.kind !== 'expandPath') continue
      // An expanded entity has its own $compute aliases, and not the outer ones.
      const outer = this.#computed
      this.#computed = new Map()
      count += this.options(item.options)
      this.#computed = outer
    }
    return count
  }

  compute(items: readonly ComputeItemSyntax[]): number {
    let count = 0
    for (const item of items) {
      const size = this.#measured(item.expression)
      this.depth = Math.max(this.depth, size.depth)
      this.#computed.set(item.alias, size)
      count += 1 + size.nodes
    }
    return count
  }

  transformations(transformations: readonly ApplyTransformationSyntax[]): number {
    let count = 0
    for (const transformation of transformations) {
      count += 1
      switch (transformation.kind) {
        case 'filter':
          count += this.expression(transformation.predicate)
          break
        case 'groupby':
          for (const property of transformation.properties) count += property.path.length
          count += this.transformations(transformation.transformations)
          break
        case 'aggregate':
          for (const aggregation of transformation.aggregations) {
            count += 1 + (aggregation.expression ? this.expression(aggregation.expression) : 0)
          }
          break
        case 'compute':
          count += this.compute(transformation.items)
          break
        case 'orderby':
          count += this.orderby(transformation.items)
          break
        case 'search':
          count += countSearchNodes(transformation.search)
          break
        case 'top':
        case 'skip':
          break
        default:
          transformation satisfies never
      }
    }
    return count
  }
}
