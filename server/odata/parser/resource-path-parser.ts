// The resource path after `/api/`: text → segments, knowing nothing of the model.
//   Orders(0b5f…)/Lines/$count  →  [name Orders (0b5f…), name Lines, count]
//   Orders/OpenSince(before=@d) →  [name Orders, name OpenSince (before=@d)]
// The binder decides which names are sets, navigations or methods, and whether parentheses
// hold a key or function parameters. Segments are split on `/`, then percent-decoded, then
// read with the expression lexer (literals as in $filter).

import { Lexer } from './lexer.ts'
import { MAX_TEXT_LENGTH, tooLong, unsupported } from './parse-errors.ts'
import { decodeComponent } from './percent-decoding.ts'
import type { AliasSyntax, LiteralSyntax, PathArgumentSyntax, PathSegmentSyntax, ResourcePathSyntax } from './syntax.ts'

const WHAT = 'resource path'

/** `$`-segments are case-sensitive (OData ABNF); these are valid OData this service lacks. */
const UNSUPPORTED_SEGMENTS = new Set(['$entity', '$all', '$crossjoin', '$each', '$filter', '$query', '$root', '$delta'])

/** Parses `path`, still percent-encoded, with or without its leading `/`. */
export function parseResourcePath(path: string): ResourcePathSyntax {
  if (path.length > MAX_TEXT_LENGTH) throw tooLong(WHAT, path.length)
  let from = path.charCodeAt(0) === 47 ? 1 : 0
  let to = path.length
  if (to > from && path.charCodeAt(to - 1) === 47) to--
  if (to <= from) return { segments: [] }
  // Split before decoding, so an encoded `%2F` in a key stays inside its segment.
  const decoded: string[] = []
  while (from <= to) {
    let end = path.indexOf('/', from)
    if (end < 0 || end > to) end = to
    decoded.push(decodeComponent(path, from, end, WHAT))
    from = end + 1
  }
  return { segments: readSegments(new Lexer(decoded.join('/'), WHAT)) }
}

function readSegments(lexer: Lexer): PathSegmentSyntax[] {
  const segments: PathSegmentSyntax[] = []
  for (;;) {
    const position = lexer.start
    if (lexer.is('identifier') && lexer.name.charCodeAt(0) === 36) {
      segments.push(readDollarSegment(lexer, segments.length))
    } else if (lexer.is('identifier')) {
      if (lexer.name.endsWith('.*')) lexer.fail(position, `invalid segment '${lexer.name}'`)
      const name = lexer.name
      lexer.next()
      const args = lexer.is('(') ? readArguments(lexer) : undefined
      segments.push({ kind: 'name', name, args, position })
    } else if (lexer.is('literal') && segments.length > 0) {
      segments.push({ kind: 'key', value: lexer.literal as LiteralSyntax, position })
      lexer.next()
    } else if (lexer.is('/') || lexer.is('end')) {
      lexer.fail(position, 'empty path segment')
    } else {
      lexer.expected(segments.length === 0 ? 'an entity set name' : 'a path segment')
    }
    if (lexer.is('end')) return segments
    if (!lexer.is('/')) lexer.expected("'/' or end of path")
    lexer.next()
  }
}

/** `$metadata`, `$count`, `$ref`, `$value`: each ends the path; `$metadata` is the whole path. */
function readDollarSegment(lexer: Lexer, index: number): PathSegmentSyntax {
  const position = lexer.start
  const name = lexer.name
  let segment: PathSegmentSyntax
  switch (name) {
    case '$metadata':
      if (index > 0) lexer.fail(position, "'$metadata' is only allowed right after the service root")
      segment = { kind: 'metadata', position }
      break
    case '$count':
    case '$ref':
    case '$value':
      if (index === 0) lexer.fail(position, `'${name}' must follow a resource, as in Orders/${name}`)
      segment = { kind: name === '$count' ? 'count' : name === '$ref' ? 'ref' : 'value', position }
      break
    case '$batch':
      throw unsupported(WHAT, lexer.text, position, '$batch')
    default:
      if (UNSUPPORTED_SEGMENTS.has(name)) throw unsupported(WHAT, lexer.text, position, `the ${name} segment`)
      return lexer.fail(position, `unknown segment '${name}'`)
  }
  lexer.next()
  if (!lexer.is('end')) {
    lexer.fail(lexer.start, `nothing may follow '${name}', found ${lexer.describe()}`)
  }
  return segment
}

/** `(…)` after a name: `()`, `(<key>)`, `(Guid=<key>)`, `(p=1,q='x',r=@a)`. */
function readArguments(lexer: Lexer): PathArgumentSyntax[] {
  lexer.next()
  const args: PathArgumentSyntax[] = []
  if (lexer.is(')')) {
    lexer.next()
    return args
  }
  for (;;) {
    const position = lexer.start
    let name: string | undefined
    if (lexer.is('identifier') && lexer.peekChar() === 61) {
      if (lexer.name.includes('.') || lexer.name.charCodeAt(0) === 36) lexer.expected('a parameter or key name')
      name = lexer.name
      lexer.next()
      lexer.next()
    }
    let value: LiteralSyntax | AliasSyntax
    if (lexer.is('literal')) value = lexer.literal as LiteralSyntax
    else if (lexer.is('alias')) value = { kind: 'alias', name: lexer.name, position: lexer.start }
    else return lexer.expected(name === undefined ? 'a key value, or name=value' : `a literal or parameter alias for ${name}`)
    lexer.next()
    args.push({ name, value, position })
    if (lexer.is(')')) break
    if (!lexer.is(',')) lexer.expected("',' or ')'")
    lexer.next()
  }
  lexer.next()
  return args
}
