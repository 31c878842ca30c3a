// $select and $expand: text → items, with $expand's nested options parsed to any depth.
//   $select=Name,Customer/Name,*
//   $expand=Customer,Lines($filter=Quantity gt 1;$select=Quantity;$expand=Product)
// Nested option names are read with or without `$` and in any case (4.01). The binder counts
// the expansion depth (MaxExpansionDepth); the parser's own depth guard only stops runaway
// nesting.

import { closestName } from '../../errors.ts'
import { readComputeItems } from './apply-parser.ts'
import { ExpressionParser } from './expression-parser.ts'
import { readOrderbyItems } from './orderby-parser.ts'
import { parseSearch, searchEnd } from './search-parser.ts'
import type { ExpandItemSyntax, ExpandOptionsSyntax, SelectItemSyntax } from './syntax.ts'

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Which nested options each kind of expand item takes (OData 4.01 ABNF expandPath). */
const ALLOWED = {
  entities: ['filter', 'select', 'orderby', 'top', 'skip', 'count', 'expand', 'levels', 'compute', 'search'],
  ref: ['filter', 'orderby', 'top', 'skip', 'count', 'search'],
  count: ['filter', 'search'],
  all: ['levels'],
} as const

type ExpandTarget = keyof typeof ALLOWED

const NO_OPTIONS: ExpandOptionsSyntax = Object.freeze({})

export function parseSelect(text: string, option = '$select'): SelectItemSyntax[] {
  const parser = new ExpressionParser(text, option)
  const items = readSelectItems(parser)
  if (!parser.lexer.is('end')) parser.lexer.expected("',' or end of input")
  return items
}

export function parseExpand(text: string, option = '$expand'): ExpandItemSyntax[] {
  const parser = new ExpressionParser(text, option)
  const items = readExpandItems(parser)
  if (!parser.lexer.is('end')) parser.lexer.expected("',' or end of input")
  return items
}

/** `*`, `Namespace.*` or a property path, separated by `,`. */
export function readSelectItems(parser: ExpressionParser): SelectItemSyntax[] {
  const lexer = parser.lexer
  const items: SelectItemSyntax[] = []
  for (;;) {
    const position = lexer.start
    if (lexer.is('*')) {
      lexer.next()
      items.push({ kind: 'selectAll', position })
    } else if (lexer.is('identifier') && lexer.name.endsWith('.*')) {
      items.push({ kind: 'selectOperations', namespace: lexer.name.slice(0, -2), position })
      lexer.next()
    } else {
      items.push({ kind: 'selectPath', path: parser.readPropertyPath('a property name or *'), position })
      if (lexer.is('(')) lexer.failUnsupported(lexer.start, 'options nested in $select')
    }
    if (!lexer.is(',')) return items
    lexer.next()
  }
}

/** Expand items separated by `,`. */
export function readExpandItems(parser: ExpressionParser): ExpandItemSyntax[] {
  const lexer = parser.lexer
  const items: ExpandItemSyntax[] = []
  for (;;) {
    items.push(lexer.is('*') ? readExpandAll(parser) : readExpandPath(parser))
    if (!lexer.is(',')) return items
    lexer.next()
  }
}

// `*`, `*/$ref`, `*($levels=2)`.
function readExpandAll(parser: ExpressionParser): ExpandItemSyntax {
  const lexer = parser.lexer
  const position = lexer.start
  lexer.next()
  if (lexer.is('/')) {
    lexer.next()
    if (!lexer.is('identifier') || lexer.name !== '$ref') lexer.expected("'$ref' after '*/'")
    lexer.next()
    return { kind: 'expandAll', ref: true, levels: undefined, position }
  }
  const options = lexer.is('(') ? readExpandOptions(parser, 'all') : NO_OPTIONS
  return { kind: 'expandAll', ref: false, levels: options.levels, position }
}

/** `Nav[/Nav…][/$ref|/$count][(options)]`. */
function readExpandPath(parser: ExpressionParser): ExpandItemSyntax {
  const lexer = parser.lexer
  const position = lexer.start
  const path: string[] = []
  let suffix: 'ref' | 'count' | undefined
  for (;;) {
    if (!lexer.is('identifier') || lexer.name.endsWith('.*')) {
      lexer.expected(path.length === 0 ? 'a navigation property or *' : "a navigation property, $ref or $count after '/'")
    }
    const name = lexer.name
    if (name.charCodeAt(0) === 36) {
      if (path.length === 0 || (name !== '$ref' && name !== '$count')) {
        if (name === '$value' && path.length === 0) lexer.failUnsupported(lexer.start, '$expand=$value')
        lexer.fail(lexer.start, `'${name}' is not allowed here`)
      }
      suffix = name === '$ref' ? 'ref' : 'count'
      lexer.next()
      break
    }
    path.push(name)
    lexer.next()
    if (!lexer.is('/')) break
    lexer.next()
  }
  const options = lexer.is('(') ? readExpandOptions(parser, suffix ?? 'entities') : NO_OPTIONS
  return { kind: 'expandPath', path, suffix, options, position }
}

/** `(option=value;…)`, at the `(`. */
function readExpandOptions(parser: ExpressionParser, target: ExpandTarget): ExpandOptionsSyntax {
  const lexer = parser.lexer
  parser.enter(lexer.start)
  lexer.next()
  const options: Mutable<ExpandOptionsSyntax> = {}
  const allowed: readonly string[] = ALLOWED[target]
  for (;;) {
    const position = lexer.start
    if (lexer.is('alias')) lexer.failUnsupported(position, 'a parameter alias inside $expand')
    if (!lexer.is('identifier')) lexer.expected('a query option such as $filter or $select')
    const written = lexer.name
    const name = (written.charCodeAt(0) === 36 ? written.slice(1) : written).toLowerCase()
    if (!allowed.includes(name)) {
      if (ALLOWED.entities.includes(name as never)) {
        lexer.fail(position, `${written} is not allowed ${target === 'all' ? 'after *' : `with /$${target}`}`)
      }
      const hint = closestName(name, allowed)
      lexer.fail(position, `unknown expand option '${written}'${hint ? `; did you mean '$${hint}'?` : ''}`)
    }
    if (options[name as keyof ExpandOptionsSyntax] !== undefined) lexer.fail(position, `${written} is given twice`)
    lexer.next()
    if (name === 'search') {
      // Search words are not expression tokens: read the raw text up to the option's end.
      if (!lexer.is('=')) lexer.expected(`'=' after ${written}`)
      const to = searchEnd(lexer.text, lexer.end)
      options.search = parseSearch(lexer.text.slice(lexer.end, to), '$search in $expand')
      lexer.resumeAt(to)
    } else {
      parser.expect('=', `'=' after ${written}`)
      readExpandOption(parser, name, options)
    }
    if (lexer.is(')')) break
    if (!lexer.is(';')) parser.failAfterOperand("';' or ')'")
    lexer.next()
  }
  lexer.next()
  parser.leave()
  return options
}

function readExpandOption(parser: ExpressionParser, name: string, options: Mutable<ExpandOptionsSyntax>): void {
  switch (name) {
    case 'filter':
      options.filter = parser.parseExpression()
      return
    case 'orderby':
      options.orderby = readOrderbyItems(parser)
      return
    case 'select':
      options.select = readSelectItems(parser)
      return
    case 'expand':
      options.expand = readExpandItems(parser)
      return
    case 'compute':
      options.compute = readComputeItems(parser)
      return
    case 'top':
      options.top = parser.readNonNegativeInteger('$top')
      return
    case 'skip':
      options.skip = parser.readNonNegativeInteger('$skip')
      return
    case 'count':
      options.count = parser.readBoolean('$count')
      return
    default:
      options.levels = readLevels(parser)
  }
}

/** `$levels=`: a positive integer or `max`. */
function readLevels(parser: ExpressionParser): number | 'max' {
  const lexer = parser.lexer
  if (lexer.isKeyword('max')) {
    lexer.next()
    return 'max'
  }
  const position = lexer.start
  const levels = parser.readNonNegativeInteger('$levels (or max)')
  if (levels === 0) lexer.fail(position, '$levels must be at least 1 (or max)')
  return levels
}
