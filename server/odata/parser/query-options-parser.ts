// The query string (`ctx.querystring`, still percent-encoded): text → QueryOptionsSyntax.
//   $filter=Total%20gt%20100&$top=5&@p='x'&before=2024-01-01
//     →  { filter: (gt Total 100), top: 5, aliases: {@p: 'x'}, custom: {before: '2024-01-01'} }
//
// Per OData 4.01 URL Conventions 2.1: split at `&`, then each option at its first `=`, then
// percent-decode name and value once. `+` stays a plus sign (RFC 3986, OData ABNF), so
// `2024-01-31T10:00:00+02:00` works unencoded; a form-encoding client's `Name+eq+'x'` is a 400
// that says to encode spaces as %20.
//
// System options are recognised with or without `$` and in any case (`$FILTER`, `filter`), each
// at most once. `@name=value` is a parameter alias: its value is parsed as an expression and
// kept apart (trees reference it as AliasSyntax), so the binder resolves it and a cache keyed
// by the URL's shape stays valid. Other names are custom options, kept as decoded text; method
// parameters of GET functions arrive that way and are parsed by the binder with
// parseParameterValue once it knows they are parameters.

import { closestName } from '../../errors.ts'
import { parseCompute, parseApply } from './apply-parser.ts'
import { ExpressionParser } from './expression-parser.ts'
import { parseFilter } from './filter-parser.ts'
import { parseOrderby } from './orderby-parser.ts'
import { MAX_TEXT_LENGTH, syntaxError, tooLong, unsupported } from './parse-errors.ts'
import { decodeComponent } from './percent-decoding.ts'
import { parseExpand, parseSelect } from './select-expand-parser.ts'
import { parseSearch } from './search-parser.ts'
import type { ExpressionSyntax, QueryOptionsSyntax } from './syntax.ts'

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const DOLLAR = 36
const AT = 64

const SUPPORTED = ['filter', 'orderby', 'select', 'expand', 'apply', 'compute', 'search', 'top', 'skip', 'count', 'skiptoken', 'format']
const UNSUPPORTED = ['index', 'id', 'deltatoken', 'schemaversion']
const SYSTEM = new Set([...SUPPORTED, ...UNSUPPORTED, 'levels'])

const ALIAS_NAME = /^@[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*$/u

export function parseQueryOptions(querystring: string): QueryOptionsSyntax {
  if (querystring.length > MAX_TEXT_LENGTH) throw tooLong('query string', querystring.length)
  const options: Mutable<QueryOptionsSyntax> = { aliases: new Map(), custom: new Map() }
  const seen = new Set<string>()
  let from = 0
  if (querystring.charCodeAt(0) === 63) from = 1 // a leading `?`, if the caller kept it
  while (from < querystring.length) {
    let to = querystring.indexOf('&', from)
    if (to < 0) to = querystring.length
    if (to > from) readOption(querystring, from, to, options, seen)
    from = to + 1
  }
  return options
}

/**
 * A parameter value (an alias's, or a custom option's once the binder knows it is a method
 * parameter): an expression, or a list `('a','b')`. `name` is named in errors.
 *   parseParameterValue("2024-01-01", 'before')  →  date 2024-01-01
 */
export function parseParameterValue(text: string, name: string): ExpressionSyntax {
  const parser = new ExpressionParser(text, name)
  const value = parser.parseExpression()
  parser.expectEnd()
  return value
}

function readOption(
  querystring: string,
  from: number,
  to: number,
  options: Mutable<QueryOptionsSyntax>,
  seen: Set<string>,
): void {
  let equals = querystring.indexOf('=', from)
  if (equals < 0 || equals > to) equals = to
  const name = decodeComponent(querystring, from, equals, 'query string')
  const value = equals < to ? decodeComponent(querystring, equals + 1, to, 'query string') : ''
  const fail = (problem: string) => syntaxError('query string', querystring, from, problem)
  if (name === '') throw fail(`a query option name expected before '='`)
  const first = name.charCodeAt(0)
  if (first === AT) {
    if (!ALIAS_NAME.test(name)) throw fail(`invalid parameter alias name '${name}'`)
    if (options.aliases.has(name)) throw fail(`${name} is given more than once`)
    if (value === '') throw fail(`${name} has no value`)
    ;(options.aliases as Map<string, ExpressionSyntax>).set(name, parseParameterValue(value, name))
    return
  }
  const system = (first === DOLLAR ? name.slice(1) : name).toLowerCase()
  if (!SYSTEM.has(system)) {
    if (first === DOLLAR) {
      const hint = closestName(system, SUPPORTED)
      throw fail(`unknown system query option '${name}'${hint ? `; did you mean '$${hint}'?` : ''}`)
    }
    if (options.custom.has(name)) throw fail(`${name} is given more than once`)
    ;(options.custom as Map<string, string>).set(name, value)
    return
  }
  const option = `$${system}`
  if (seen.has(option)) throw fail(`${option} is given more than once`)
  seen.add(option)
  if (UNSUPPORTED.includes(system)) throw unsupported('query string', querystring, from, `the ${option} query option`)
  if (system === 'levels') {
    throw fail('$levels is only allowed inside $expand, as in $expand=Manager($levels=2)')
  }
  if (value === '') throw fail(`${option} has no value`)
  readSystemOption(option, value, options)
}

function readSystemOption(option: string, value: string, options: Mutable<QueryOptionsSyntax>): void {
  switch (option) {
    case '$filter':
      options.filter = parseFilter(value, option)
      return
    case '$orderby':
      options.orderby = parseOrderby(value, option)
      return
    case '$select':
      options.select = parseSelect(value, option)
      return
    case '$expand':
      options.expand = parseExpand(value, option)
      return
    case '$apply':
      options.apply = parseApply(value, option)
      return
    case '$compute':
      options.compute = parseCompute(value, option)
      return
    case '$search':
      options.search = parseSearch(value, option)
      return
    case '$top':
      options.top = parseNonNegativeInteger(value, option)
      return
    case '$skip':
      options.skip = parseNonNegativeInteger(value, option)
      return
    case '$count':
      options.count = parseBoolean(value, option)
      return
    case '$skiptoken':
      options.skiptoken = value
      return
    default:
      options.format = value
  }
}

/** `1*DIGIT`, at most Number.MAX_SAFE_INTEGER. */
function parseNonNegativeInteger(text: string, option: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) {
      throw syntaxError(option, text, i, `a non-negative integer expected, found '${text.length > 40 ? `${text.slice(0, 40)}…` : text}'`)
    }
  }
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw syntaxError(option, text, 0, `${text} is too large`)
  return value
}

function parseBoolean(text: string, option: string): boolean {
  const lower = text.length <= 5 ? text.toLowerCase() : ''
  if (lower === 'true') return true
  if (lower === 'false') return false
  throw syntaxError(option, text, 0, `true or false expected, found '${text.length > 40 ? `${text.slice(0, 40)}…` : text}'`)
}


