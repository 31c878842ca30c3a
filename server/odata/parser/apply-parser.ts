// $apply (OData Data Aggregation 4.0) and $compute: text → transformations.
//   $apply=filter(Status eq 'Open')/groupby((Customer/Name),aggregate(Total with sum as Revenue))
//     →  [filter (eq Status 'Open'), groupby [Customer/Name] [aggregate Total sum Revenue]]
// Supported: filter, groupby (with or without a nested sequence), aggregate (sum, min, max,
// average, countdistinct, $count), compute, orderby, top, skip. The other standard
// transformations are 501. Keywords are read case-insensitively, like the 4.01 operators.

import { closestName } from '../../errors.ts'
import { ExpressionParser } from './expression-parser.ts'
import { readOrderbyItems } from './orderby-parser.ts'
import { parseSearch, searchEnd } from './search-parser.ts'
import type {
  AggregateMethod,
  AggregationSyntax,
  ApplyTransformationSyntax,
  ComputeItemSyntax,
  MemberSyntax,
} from './syntax.ts'

const OPEN = 40

const TRANSFORMATIONS = ['filter', 'search', 'groupby', 'aggregate', 'compute', 'orderby', 'top', 'skip']

const UNSUPPORTED_TRANSFORMATIONS = new Set([
  'expand', 'concat', 'join', 'outerjoin', 'nest', 'addnested', 'identity',
  'topcount', 'bottomcount', 'toppercent', 'bottompercent', 'topsum', 'bottomsum',
  'ancestors', 'descendants', 'traverse',
])

const METHODS = new Set<string>(['sum', 'min', 'max', 'average', 'countdistinct'])

export function parseApply(text: string, option = '$apply'): ApplyTransformationSyntax[] {
  const parser = new ExpressionParser(text, option)
  const transformations = readTransformations(parser)
  if (!parser.lexer.is('end')) parser.lexer.expected("'/' or end of input")
  return transformations
}

/** $compute=Price mul Quantity as Amount,… */
export function parseCompute(text: string, option = '$compute'): ComputeItemSyntax[] {
  const parser = new ExpressionParser(text, option)
  const items = readComputeItems(parser)
  if (!parser.lexer.is('end')) parser.lexer.expected("',' or end of input")
  return items
}

/** `expr as Alias` separated by `,`; stops at anything else. */
export function readComputeItems(parser: ExpressionParser): ComputeItemSyntax[] {
  const lexer = parser.lexer
  const items: ComputeItemSyntax[] = []
  for (;;) {
    const position = lexer.start
    const expression = parser.parseExpression()
    const alias = readAsAlias(parser)
    items.push({ kind: 'compute', expression, alias, position })
    if (!lexer.is(',')) return items
    lexer.next()
  }
}

/** Transformations separated by `/`. */
function readTransformations(parser: ExpressionParser): ApplyTransformationSyntax[] {
  const transformations = [readTransformation(parser)]
  while (parser.lexer.is('/')) {
    parser.lexer.next()
    transformations.push(readTransformation(parser))
  }
  return transformations
}

function readTransformation(parser: ExpressionParser): ApplyTransformationSyntax {
  const lexer = parser.lexer
  const position = lexer.start
  if (!lexer.is('identifier')) lexer.expected('a transformation such as filter(…), groupby(…) or aggregate(…)')
  const written = lexer.name
  const name = written.toLowerCase()
  if (UNSUPPORTED_TRANSFORMATIONS.has(name)) lexer.failUnsupported(position, `the transformation '${written}'`)
  if (!TRANSFORMATIONS.includes(name)) {
    const hint = closestName(name, TRANSFORMATIONS)
    lexer.fail(position, `unknown transformation '${written}'${hint ? `; did you mean '${hint}'?` : ''}`)
  }
  if (lexer.peekChar() !== OPEN) {
    lexer.next()
    lexer.expected(`'(' after ${written}`)
  }
  lexer.next()
  if (name === 'search') {
    // Search words are not expression tokens: read the raw text up to the closing ')'.
    const to = searchEnd(lexer.text, lexer.end)
    const search = parseSearch(lexer.text.slice(lexer.end, to), '$apply search()')
    lexer.resumeAt(to)
    if (!lexer.is(')')) lexer.expected("')' after search(…")
    lexer.next()
    return { kind: 'search', search, position }
  }
  lexer.next()
  parser.enter(position)
  const transformation = readTransformationBody(parser, name, position)
  if (!lexer.is(')')) parser.failAfterOperand("')'")
  lexer.next()
  parser.leave()
  return transformation
}

/** Between the parentheses of `name(…)`. */
function readTransformationBody(parser: ExpressionParser, name: string, position: number): ApplyTransformationSyntax {
  switch (name) {
    case 'filter':
      return { kind: 'filter', predicate: parser.parseExpression(), position }
    case 'groupby':
      return readGroupby(parser, position)
    case 'aggregate': {
      const aggregations = [readAggregation(parser)]
      while (parser.lexer.is(',')) {
        parser.lexer.next()
        aggregations.push(readAggregation(parser))
      }
      return { kind: 'aggregate', aggregations, position }
    }
    case 'compute':
      return { kind: 'compute', items: readComputeItems(parser), position }
    case 'orderby':
      return { kind: 'orderby', items: readOrderbyItems(parser), position }
    case 'top':
      return { kind: 'top', count: parser.readNonNegativeInteger('top'), position }
    default:
      return { kind: 'skip', count: parser.readNonNegativeInteger('skip'), position }
  }
}

/** `((p1,Nav/p2))` or `((p1),transformations)`, after `groupby(`. */
function readGroupby(parser: ExpressionParser, position: number): ApplyTransformationSyntax {
  const lexer = parser.lexer
  parser.expect('(', "'(' and the grouping properties, as in groupby((Status),…)")
  const properties: MemberSyntax[] = []
  for (;;) {
    const start = lexer.start
    const lower = lexer.is('identifier') ? lexer.name.toLowerCase() : ''
    if (lower === 'rollup' || lower === 'rolluprecursive') lexer.failUnsupported(start, lexer.name)
    properties.push({ kind: 'member', path: parser.readPropertyPath('a grouping property'), position: start })
    if (lexer.is(')')) break
    parser.expect(',', "',' or ')'")
  }
  lexer.next()
  let transformations: ApplyTransformationSyntax[] = []
  if (lexer.is(',')) {
    lexer.next()
    transformations = readTransformations(parser)
  }
  return { kind: 'groupby', properties, transformations, position }
}

/** `Total with sum as Revenue`, `$count as Orders`, `Lines/$count as Lines`. */
function readAggregation(parser: ExpressionParser): AggregationSyntax {
  const lexer = parser.lexer
  const position = lexer.start
  if (lexer.is('identifier') && lexer.name === '$count') {
    lexer.next()
    return { kind: 'aggregation', expression: undefined, method: 'count', alias: readAsAlias(parser), position }
  }
  const expression = parser.parseExpression()
  if (expression.kind === 'count' && lexer.isKeyword('as')) {
    return { kind: 'aggregation', expression, method: 'count', alias: readAsAlias(parser), position }
  }
  if (!lexer.isKeyword('with')) parser.failAfterOperand("'with' and an aggregation method", ['with'])
  lexer.next()
  const methodAt = lexer.start
  if (!lexer.is('identifier')) lexer.expected('an aggregation method (sum, min, max, average, countdistinct)')
  const method = lexer.name.toLowerCase()
  if (!METHODS.has(method)) {
    if (method.includes('.')) lexer.failUnsupported(methodAt, `the custom aggregation method '${lexer.name}'`)
    const hint = closestName(method, METHODS)
    lexer.fail(methodAt, `unknown aggregation method '${lexer.name}'${hint ? `; did you mean '${hint}'?` : ''}`)
  }
  lexer.next()
  if (lexer.isKeyword('from')) lexer.failUnsupported(lexer.start, "aggregation 'from'")
  return { kind: 'aggregation', expression, method: method as AggregateMethod, alias: readAsAlias(parser), position }
}

function readAsAlias(parser: ExpressionParser): string {
  const lexer = parser.lexer
  if (!lexer.isKeyword('as')) parser.failAfterOperand("'as' and an alias", ['as'])
  lexer.next()
  return parser.readName('an alias name after as')
}
