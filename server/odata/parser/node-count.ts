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

export function countNodes(options: QueryOptionsSyntax): number {
  let count = countOptions(options)
  if (options.apply) count += countTransformations(options.apply)
  for (const value of options.aliases.values()) count += countExpressionNodes(value)
  return count
}

export function countExpressionNodes(expression: ExpressionSyntax): number {
  switch (expression.kind) {
    case 'literal':
    case 'alias':
    case 'typeName':
    case 'list':
      return 1
    case 'member':
      return expression.path.length
    case 'binary':
      return 1 + countExpressionNodes(expression.left) + countExpressionNodes(expression.right)
    case 'unary':
      return 1 + countExpressionNodes(expression.operand)
    case 'call': {
      let count = 1
      for (const arg of expression.args) count += countExpressionNodes(arg)
      return count
    }
    case 'lambda':
      return 1 + expression.collection.path.length + (expression.predicate ? countExpressionNodes(expression.predicate) : 0)
    case 'count':
      return 1 + expression.collection.path.length + (expression.filter ? countExpressionNodes(expression.filter) : 0)
    default:
      return expression satisfies never
  }
}

/** The options $expand can nest; the top level shares them. */
function countOptions(options: ExpandOptionsSyntax): number {
  let count = 0
  if (options.filter) count += countExpressionNodes(options.filter)
  if (options.orderby) count += countOrderby(options.orderby)
  if (options.select) count += countSelect(options.select)
  if (options.expand) count += countExpand(options.expand)
  if (options.compute) count += countCompute(options.compute)
  return count
}

function countOrderby(items: readonly OrderbyItemSyntax[]): number {
  let count = 0
  for (const item of items) count += 1 + countExpressionNodes(item.expression)
  return count
}

function countSelect(items: readonly SelectItemSyntax[]): number {
  return items.length
}

function countExpand(items: readonly ExpandItemSyntax[]): number {
  let count = 0
  for (const item of items) count += 1 + (item.kind === 'expandPath' ? countOptions(item.options) : 0)
  return count
}

function countCompute(items: readonly ComputeItemSyntax[]): number {
  let count = 0
  for (const item of items) count += 1 + countExpressionNodes(item.expression)
  return count
}

function countTransformations(transformations: readonly ApplyTransformationSyntax[]): number {
  let count = 0
  for (const transformation of transformations) {
    count += 1
    switch (transformation.kind) {
      case 'filter':
        count += countExpressionNodes(transformation.predicate)
        break
      case 'groupby':
        for (const property of transformation.properties) count += property.path.length
        count += countTransformations(transformation.transformations)
        break
      case 'aggregate':
        for (const aggregation of transformation.aggregations) {
          count += 1 + (aggregation.expression ? countExpressionNodes(aggregation.expression) : 0)
        }
        break
      case 'compute':
        count += countCompute(transformation.items)
        break
      case 'orderby':
        count += countOrderby(transformation.items)
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
