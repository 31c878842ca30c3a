// A compact notation for syntax trees, so parser tests read as tables of "this text gives that
// tree". Operators are prefix S-expressions, calls look like calls, paths like paths:
//   Name eq 'x' and Lines/any(l:l/Quantity gt 8)  →  (and (eq Name 'x') Lines/any(l:(gt l/Quantity 8)))
// Literals: strings quoted, int and boolean bare, null bare, others `type:value`
// (decimal:1.5, double:1500, guid:…, date:…, dateTimeOffset:…, timeOfDay:…, duration:P1D,
// binary:AAE=, enum:Sales.Color'Red').

import { expect } from 'vitest'
import { ServiceError } from '../../../server/errors.ts'
import type {
  ApplyTransformationSyntax,
  ComputeItemSyntax,
  ExpandItemSyntax,
  ExpandOptionsSyntax,
  ExpressionSyntax,
  LiteralSyntax,
  OrderbyItemSyntax,
  PathSegmentSyntax,
  SelectItemSyntax,
} from '../../../server/odata/parser/syntax.ts'

export function showLiteral(literal: LiteralSyntax): string {
  switch (literal.type) {
    case 'string':
      return `'${literal.value.replaceAll("'", "''")}'`
    case 'int':
    case 'boolean':
      return String(literal.value)
    case 'null':
      return 'null'
    case 'enum':
      return `enum:${literal.enumType}'${literal.value}'`
    default:
      return `${literal.type}:${String(literal.value)}`
  }
}

export function show(expression: ExpressionSyntax): string {
  switch (expression.kind) {
    case 'literal':
      return showLiteral(expression)
    case 'member':
      return expression.path.join('/')
    case 'alias':
      return expression.name
    case 'binary':
      return `(${expression.op} ${show(expression.left)} ${show(expression.right)})`
    case 'unary':
      return `(${expression.op === 'not' ? 'not' : '-'} ${show(expression.operand)})`
    case 'call':
      return `${expression.name}(${expression.args.map(show).join(',')})`
    case 'typeName':
      return expression.collection ? `type:Collection(${expression.name})` : `type:${expression.name}`
    case 'lambda': {
      const body = expression.predicate ? `${expression.variable}:${show(expression.predicate)}` : ''
      return `${show(expression.collection)}/${expression.op}(${body})`
    }
    case 'count':
      return `${show(expression.collection)}/$count${expression.filter ? `(${show(expression.filter)})` : ''}`
    case 'list':
      return `[${expression.items.map(show).join(',')}]`
  }
}

export function showOrderby(items: readonly OrderbyItemSyntax[]): string {
  return items.map((item) => `${show(item.expression)} ${item.direction}`).join(', ')
}

export function showSelect(items: readonly SelectItemSyntax[]): string {
  return items
    .map((item) => (item.kind === 'selectAll' ? '*' : item.kind === 'selectOperations' ? `${item.namespace}.*` : item.path.join('/')))
    .join(', ')
}

function showCompute(items: readonly ComputeItemSyntax[]): string {
  return items.map((item) => `${show(item.expression)} as ${item.alias}`).join(', ')
}

function showExpandOptions(options: ExpandOptionsSyntax): string {
  const parts: string[] = []
  if (options.filter) parts.push(`filter:${show(options.filter)}`)
  if (options.orderby) parts.push(`orderby:${showOrderby(options.orderby)}`)
  if (options.select) parts.push(`select:${showSelect(options.select)}`)
  if (options.compute) parts.push(`compute:${showCompute(options.compute)}`)
  if (options.expand) parts.push(`expand:[${showExpand(options.expand)}]`)
  if (options.top !== undefined) parts.push(`top:${options.top}`)
  if (options.skip !== undefined) parts.push(`skip:${options.skip}`)
  if (options.count !== undefined) parts.push(`count:${options.count}`)
  if (options.levels !== undefined) parts.push(`levels:${options.levels}`)
  return parts.length > 0 ? `{${parts.join('; ')}}` : ''
}

export function showExpand(items: readonly ExpandItemSyntax[]): string {
  return items
    .map((item) => {
      if (item.kind === 'expandAll') return `*${item.ref ? '/$ref' : ''}${item.levels !== undefined ? `{levels:${item.levels}}` : ''}`
      return `${item.path.join('/')}${item.suffix ? `/$${item.suffix}` : ''}${showExpandOptions(item.options)}`
    })
    .join(', ')
}

export function showApply(transformations: readonly ApplyTransformationSyntax[]): string {
  return transformations
    .map((t) => {
      switch (t.kind) {
        case 'filter':
          return `filter(${show(t.predicate)})`
        case 'groupby': {
          const properties = t.properties.map(show).join(',')
          return `groupby([${properties}]${t.transformations.length > 0 ? `, ${showApply(t.transformations)}` : ''})`
        }
        case 'aggregate':
          return `aggregate(${t.aggregations
            .map((a) => `${a.expression ? `${show(a.expression)} ` : ''}${a.method} as ${a.alias}`)
            .join(', ')})`
        case 'compute':
          return `compute(${showCompute(t.items)})`
        case 'orderby':
          return `orderby(${showOrderby(t.items)})`
        case 'top':
        case 'skip':
          return `${t.kind}(${t.count})`
      }
    })
    .join(' / ')
}

export function showPath(segments: readonly PathSegmentSyntax[]): string {
  return segments
    .map((segment) => {
      switch (segment.kind) {
        case 'name': {
          if (segment.args === undefined) return segment.name
          const args = segment.args.map((arg) => `${arg.name !== undefined ? `${arg.name}=` : ''}${show(arg.value)}`)
          return `${segment.name}(${args.join(',')})`
        }
        case 'key':
          return `key:${showLiteral(segment.value)}`
        default:
          return `$${segment.kind}`
      }
    })
    .join(' / ')
}

/** The ServiceError `run` throws; fails the test if it throws nothing or something else. */
export function errorOf(run: () => unknown): ServiceError {
  try {
    run()
  } catch (error) {
    if (error instanceof ServiceError) return error
    throw error
  }
  expect.unreachable('expected a ServiceError')
}
