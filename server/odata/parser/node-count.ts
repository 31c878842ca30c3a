// Counts the nodes of a parsed query, for MaxNodeCount (ApiOptions, default 100), which the
// binder enforces. What counts as one node:
//   - every expression node (literal, alias, operator, call, type name, lambda, $count, list),
//     except that a member path counts one per segment (`Customer/Name` is 2, as odata.net's
//     bound tree has a node per navigation) and a list counts once, however many values it holds
//     (`Guid in (…500 keys…)` costs one parameter array, not 500 nodes);
//   - every $orderby item, $select item, $expand item and $compute item;
//   - every $apply transformation and every aggregation inside one;
//   - every parameter alias value, once, where it is declared.
// $top, $skip, $count, $levels and the like count nothing.
//
// The same walk measures the deepest expression tree. The parser bounds nesting, not chains
// (`a or b or …`, read in a loop), and a chain is as deep as it is long; the binder and the SQL
// compiler recurse over the tree, so its depth is bounded too (MAX_TREE_DEPTH), checked after
// MaxNodeCount: with the default MaxNodeCount only an administrator's larger one reaches it.

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
  const measure = new Measure()
  let nodes = measure.options(options)
  if (options.apply) nodes += measure.transformations(options.apply)
  for (const value of options.aliases.values()) nodes += measure.expression(value)
  return { nodes, depth: measure.depth }
}

export function countNodes(options: QueryOptionsSyntax): number {
  return measureQuery(options).nodes
}

export function countExpressionNodes(expression: ExpressionSyntax): number {
  return new Measure().expression(expression)
}

class Measure {
  depth = 0

  /** Without recursion: a chain of thousands of operators is a tree thousands deep. */
  expression(root: ExpressionSyntax): number {
    let count = 0
    const pending: [ExpressionSyntax, number][] = [[root, 1]]
    while (pending.length > 0) {
      const [expression, level] = pending.pop()!
      if (level > this.depth) this.depth = level
      const below = level + 1
      switch (expression.kind) {
        case 'literal':
        case 'alias':
        case 'typeName':
        case 'list':
          count += 1
          break
        case 'member':
          count += expression.path.length
          break
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
    if (options.filter) count += this.expression(options.filter)
    if (options.orderby) count += this.orderby(options.orderby)
    if (options.select) count += this.select(options.select)
    if (options.expand) count += this.expand(options.expand)
    if (options.compute) count += this.compute(options.compute)
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
    for (const item of items) count += 1 + (item.kind === 'expandPath' ? this.options(item.options) : 0)
    return count
  }

  compute(items: readonly ComputeItemSyntax[]): number {
    let count = 0
    for (const item of items) count += 1 + this.expression(item.expression)
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
