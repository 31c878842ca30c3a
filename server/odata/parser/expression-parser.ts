// Parses the OData common expression grammar into ExpressionSyntax: the engine behind $filter,
// $orderby, $apply, $compute and alias values. It knows the operators and the built-in
// functions, nothing of the entity model.
//
//   Name eq 'x' and Lines/any(l:l/Quantity gt 8)
//     →  (and (eq Name 'x') Lines/any(l:(gt l/Quantity 8)))
//
// Precedence, highest first (OData 4.01 URL Conventions 5.1.1.16; all binary operators are
// left-associative):
//   primary          member paths, calls, (…), literals, and the postfix `has` and `in`
//   unary            -  not
//   multiplicative   mul div divby mod
//   additive         add sub
//   relational       gt ge lt le
//   equality         eq ne
//   and, then or
// Operator, function and lambda names are case-insensitive (4.01); `null`, `INF`, `NaN` and
// `$`-names are not (the ABNF marks them %s).

import { closestName } from '../../errors.ts'
import { Lexer } from './lexer.ts'
import { MAX_DEPTH, tooDeep } from './parse-errors.ts'
import type {
  AliasSyntax,
  BinaryOperator,
  CallSyntax,
  CountSyntax,
  ExpressionSyntax,
  FunctionName,
  LambdaSyntax,
  ListSyntax,
  LiteralSyntax,
  MemberSyntax,
  TypeNameSyntax,
} from './syntax.ts'

const OPEN = 40
const CLOSE = 41
const DOLLAR = 36

/** Binary operator levels, lowest precedence first; `has` and `in` are primary (postfix). */
const LEVELS: readonly ReadonlyMap<string, BinaryOperator>[] = [
  new Map([['or', 'or']]),
  new Map([['and', 'and']]),
  new Map([['eq', 'eq'], ['ne', 'ne']]),
  new Map([['gt', 'gt'], ['ge', 'ge'], ['lt', 'lt'], ['le', 'le']]),
  new Map([['add', 'add'], ['sub', 'sub']]),
  new Map([['mul', 'mul'], ['div', 'div'], ['divby', 'divby'], ['mod', 'mod']]),
]

const OPERATOR_NAMES = [...LEVELS.flatMap((level) => [...level.keys()]), 'has', 'in', 'not']

/** Words that, out of place, are misplaced rather than misspelt: no "did you mean" for them. */
const KEYWORDS = new Set([...OPERATOR_NAMES, 'as', 'with', 'from', 'asc', 'desc', 'any', 'all'])

/** Built-in functions and their argument counts [min, max]. */
const FUNCTIONS: ReadonlyMap<string, readonly [number, number]> = new Map<FunctionName, readonly [number, number]>([
  ['contains', [2, 2]], ['startswith', [2, 2]], ['endswith', [2, 2]], ['length', [1, 1]],
  ['indexof', [2, 2]], ['substring', [2, 3]], ['tolower', [1, 1]], ['toupper', [1, 1]],
  ['trim', [1, 1]], ['concat', [2, 2]], ['matchespattern', [2, 2]],
  ['year', [1, 1]], ['month', [1, 1]], ['day', [1, 1]], ['hour', [1, 1]], ['minute', [1, 1]],
  ['second', [1, 1]], ['fractionalseconds', [1, 1]], ['date', [1, 1]], ['time', [1, 1]],
  ['now', [0, 0]], ['totaloffsetminutes', [1, 1]], ['maxdatetime', [0, 0]], ['mindatetime', [0, 0]],
  ['round', [1, 1]], ['floor', [1, 1]], ['ceiling', [1, 1]],
  ['cast', [1, 2]], ['isof', [1, 2]],
])

/** Standard OData functions this service does not implement: 501, not "unknown". */
const UNSUPPORTED_FUNCTIONS = new Set([
  'totalseconds', 'case', 'hassubset', 'hassubsequence', 'geo.distance', 'geo.intersects', 'geo.length', 'isdefined',
])

function arity([min, max]: readonly [number, number]): string {
  const count = min === max ? `${min}` : `${min} or ${max}`
  return `${count} argument${max === 1 ? '' : 's'}`
}

export class ExpressionParser {
  readonly lexer: Lexer
  private depth = 0

  constructor(text: string, option: string) {
    this.lexer = new Lexer(text, option)
  }

  /** One level deeper (parentheses, calls, lambdas, unary operators, nested options). */
  enter(position: number): void {
    if (++this.depth > MAX_DEPTH) throw tooDeep(this.lexer.option, this.lexer.text, position)
  }

  leave(): void {
    this.depth--
  }

  /** commonExpr: the whole precedence chain. */
  parseExpression(): ExpressionSyntax {
    this.enter(this.lexer.start)
    const expression = this.parseBinary(0)
    this.leave()
    return expression
  }

  /** Fails unless the whole text was read. */
  expectEnd(): void {
    if (!this.lexer.is('end')) this.failAfterOperand('end of input')
  }

  /** After a complete operand: a misspelt operator gets a hint, else "<expected> expected". */
  failAfterOperand(expected: string, alternatives: readonly string[] = []): never {
    const lexer = this.lexer
    if (lexer.is('identifier') && !lexer.name.includes('.')) {
      // Context words first, so `dsc` suggests desc rather than asc; a known word in the
      // wrong place (`Name asc desc`) is misplaced, not misspelt, and gets no hint.
      const word = lexer.name.toLowerCase()
      const known = [...alternatives, ...OPERATOR_NAMES]
      const hint = word.length < 3 || KEYWORDS.has(word) || known.includes(word) ? undefined : closestName(word, known)
      if (hint) lexer.fail(lexer.start, `unknown operator ${lexer.describe()}; did you mean '${hint}'?`)
    }
    return lexer.expected(`an operator or ${expected}`)
  }

  expect(kind: '(' | ')' | ',' | '=' | ':', what = `'${kind}'`): void {
    if (this.lexer.kind !== kind) this.lexer.expected(what)
    this.lexer.next()
  }

  /** A plain name, no dots and no `$`: a lambda variable, the alias after `as`. */
  readName(what: string): string {
    const lexer = this.lexer
    if (!lexer.is('identifier') || lexer.name.includes('.') || lexer.name.charCodeAt(0) === DOLLAR) lexer.expected(what)
    const name = lexer.name
    lexer.next()
    return name
  }

  /** `1*DIGIT` as a token ($top inside $expand, top(5) in $apply). */
  readNonNegativeInteger(what: string): number {
    const lexer = this.lexer
    const literal = lexer.literal
    if (!lexer.is('literal') || literal?.type !== 'int' || typeof literal.value !== 'number' || !/^\d+$/.test(literal.text)) {
      return lexer.expected(`a non-negative integer for ${what}`)
    }
    lexer.next()
    return literal.value
  }

  readBoolean(what: string): boolean {
    const lexer = this.lexer
    const literal = lexer.literal
    if (!lexer.is('literal') || literal?.type !== 'boolean') return lexer.expected(`true or false for ${what}`)
    lexer.next()
    return literal.value
  }

  /** `Name`, `Customer/Name`: names separated by `/`, no `$`-segments, no calls. */
  readPropertyPath(what: string): string[] {
    const lexer = this.lexer
    const path: string[] = []
    for (;;) {
      if (!lexer.is('identifier') || lexer.name.charCodeAt(0) === DOLLAR || lexer.name.endsWith('.*')) lexer.expected(what)
      path.push(lexer.name)
      lexer.next()
      if (!lexer.is('/')) return path
      lexer.next()
    }
  }

  // ── precedence levels ──────────────────────────────────────────────────────────────────

  private parseBinary(level: number): ExpressionSyntax {
    if (level === LEVELS.length) return this.parseUnary()
    const operators = LEVELS[level]
    const lexer = this.lexer
    let left = this.parseBinary(level + 1)
    // A chain (`a or b or c …`) is read in this loop, not by recursion, so it does not count
    // against the nesting limit: its length is bounded by MaxNodeCount, which the handler
    // checks on the finished tree (node-count.ts) and names in its refusal.
    while (lexer.is('identifier')) {
      const op = operators.get(lexer.lower)
      if (op === undefined) break
      const position = lexer.start
      lexer.next()
      const right = this.parseBinary(level + 1)
      left = { kind: 'binary', op, left, right, position }
    }
    return left
  }

  private parseUnary(): ExpressionSyntax {
    const lexer = this.lexer
    const position = lexer.start
    let op: 'not' | 'negate' | undefined
    if (lexer.is('-')) op = 'negate'
    else if (lexer.is('identifier') && lexer.lower === 'not') op = 'not'
    if (op === undefined) return this.parsePostfix()
    lexer.next()
    this.enter(position)
    const operand = this.parseUnary()
    this.leave()
    return { kind: 'unary', op, operand, position }
  }

  /** A primary followed by `in (…)` or `has …`, which bind tightest in OData 4.01. */
  private parsePostfix(): ExpressionSyntax {
    const lexer = this.lexer
    let left = this.parsePrimary()
    // A chain, like the binary operators' (parseBinary): bounded by MaxNodeCount, not nesting.
    while (lexer.is('identifier') && (lexer.lower === 'in' || lexer.lower === 'has')) {
      const op: BinaryOperator = lexer.lower === 'in' ? 'in' : 'has'
      const position = lexer.start
      lexer.next()
      const right = op === 'in' && lexer.is('(') ? this.parseList() : this.parsePrimary()
      left = { kind: 'binary', op, left, right, position }
    }
    return left
  }

  private parsePrimary(): ExpressionSyntax {
    const lexer = this.lexer
    switch (lexer.kind) {
      case 'literal': {
        const literal = lexer.literal as LiteralSyntax
        lexer.next()
        return literal
      }
      case 'alias': {
        const alias: AliasSyntax = { kind: 'alias', name: lexer.name, position: lexer.start }
        lexer.next()
        if (lexer.is('/')) lexer.failUnsupported(lexer.start, 'a path after a parameter alias')
        return alias
      }
      case '(':
        return this.parseParenthesized()
      case 'identifier':
        if (lexer.name.charCodeAt(0) !== DOLLAR && lexer.peekChar() === OPEN) return this.parseCall()
        return this.parseMemberPath()
      default:
        return lexer.expected('an expression')
    }
  }

  /**
   * `(expr)`, or a list `('a','b')` when commas follow: a list is what an alias value such as
   * `@colors=('red','green')` holds, for `Color in @colors`.
   */
  private parseParenthesized(): ExpressionSyntax {
    const lexer = this.lexer
    const position = lexer.start
    lexer.next()
    if (lexer.is(')')) {
      lexer.next()
      return { kind: 'list', items: [], position }
    }
    const first = this.parseExpression()
    if (!lexer.is(',')) {
      if (!lexer.is(')')) this.failAfterOperand("')'")
      lexer.next()
      return first
    }
    if (first.kind !== 'literal' && first.kind !== 'alias') return lexer.fail(first.position, 'a list may hold only literals and parameter aliases')
    const items: (LiteralSyntax | AliasSyntax)[] = [first]
    while (lexer.is(',')) {
      lexer.next()
      items.push(this.readListItem())
    }
    this.expect(')', "',' or ')'")
    return { kind: 'list', items, position }
  }

  /** The right side of `in`: `(` [ literal *( `,` literal ) ] `)`. */
  private parseList(): ListSyntax {
    const lexer = this.lexer
    const position = lexer.start
    lexer.next()
    const items: (LiteralSyntax | AliasSyntax)[] = []
    if (!lexer.is(')')) {
      items.push(this.readListItem())
      while (lexer.is(',')) {
        lexer.next()
        items.push(this.readListItem())
      }
    }
    this.expect(')', "',' or ')'")
    return { kind: 'list', items, position }
  }

  private readListItem(): LiteralSyntax | AliasSyntax {
    const lexer = this.lexer
    if (lexer.is('literal')) {
      const literal = lexer.literal as LiteralSyntax
      lexer.next()
      return literal
    }
    if (lexer.is('alias')) {
      const alias: AliasSyntax = { kind: 'alias', name: lexer.name, position: lexer.start }
      lexer.next()
      return alias
    }
    return lexer.expected('a literal (a list holds only literals and parameter aliases)')
  }

  // ── calls ──────────────────────────────────────────────────────────────────────────────

  private parseCall(): CallSyntax {
    const lexer = this.lexer
    const position = lexer.start
    const written = lexer.name
    const name = written.toLowerCase()
    const counts = FUNCTIONS.get(name)
    if (counts === undefined) {
      if (name === 'any' || name === 'all') {
        lexer.fail(position, `'${written}' must follow a collection path, as in Lines/${name}(l:l/Quantity gt 1)`)
      }
      if (UNSUPPORTED_FUNCTIONS.has(name)) lexer.failUnsupported(position, `the function '${written}'`)
      const hint = closestName(name, FUNCTIONS.keys())
      return lexer.fail(position, `unknown function '${written}'${hint ? `; did you mean '${hint}'?` : ''}`)
    }
    lexer.next()
    lexer.next() // `(`, seen by peekChar
    this.enter(position)
    const args = name === 'cast' || name === 'isof' ? this.readTypeArguments() : this.readArguments()
    this.leave()
    if (args.length < counts[0] || args.length > counts[1]) {
      lexer.fail(position, `${written} takes ${arity(counts)}, not ${args.length}`)
    }
    return { kind: 'call', name: name as FunctionName, args, position }
  }

  /** After `(`: `)` or expressions separated by `,` then `)`. */
  private readArguments(): ExpressionSyntax[] {
    const lexer = this.lexer
    const args: ExpressionSyntax[] = []
    if (lexer.is(')')) {
      lexer.next()
      return args
    }
    for (;;) {
      args.push(this.parseExpression())
      if (lexer.is(')')) break
      if (!lexer.is(',')) this.failAfterOperand("',' or ')'")
      lexer.next()
    }
    lexer.next()
    return args
  }

  /** cast and isof, after `(`: `Type)` or `expr, Type)`. */
  private readTypeArguments(): ExpressionSyntax[] {
    const lexer = this.lexer
    const args: ExpressionSyntax[] = []
    if (!this.atLoneTypeName()) {
      args.push(this.parseExpression())
      if (!lexer.is(',')) this.failAfterOperand("',' and a type name")
      lexer.next()
    }
    args.push(this.readTypeName())
    if (!lexer.is(')')) lexer.expected("')'")
    lexer.next()
    return args
  }

  /** `Edm.Decimal)` or `Collection(`: the one-argument form, whose argument is a type. */
  private atLoneTypeName(): boolean {
    const lexer = this.lexer
    if (!lexer.is('identifier') || lexer.name.charCodeAt(0) === DOLLAR) return false
    const next = lexer.peekChar()
    return next === CLOSE || (next === OPEN && lexer.name === 'Collection')
  }

  private readTypeName(): TypeNameSyntax {
    const lexer = this.lexer
    const position = lexer.start
    if (!lexer.is('identifier') || lexer.name.charCodeAt(0) === DOLLAR || lexer.name.endsWith('.*')) {
      lexer.expected('a type name')
    }
    if (lexer.name === 'Collection' && lexer.peekChar() === OPEN) {
      lexer.next()
      lexer.next()
      const inner = this.readTypeName()
      this.expect(')')
      return { kind: 'typeName', name: inner.name, collection: true, position }
    }
    const name = lexer.name
    lexer.next()
    return { kind: 'typeName', name, collection: false, position }
  }

  // ── paths, lambdas, $count ─────────────────────────────────────────────────────────────

  /** `Name`, `Customer/Name`, `$it/Total`, then maybe `/any(…)`, `/all(…)` or `/$count`. */
  private parseMemberPath(): ExpressionSyntax {
    const lexer = this.lexer
    const position = lexer.start
    const path: string[] = []
    for (;;) {
      const name = lexer.name
      const segment = lexer.start
      if (name.endsWith('.*')) lexer.fail(segment + name.length - 1, "unexpected '*'")
      if (name.charCodeAt(0) === DOLLAR) {
        if (name === '$count' && path.length > 0) return this.parseCount({ kind: 'member', path, position })
        if (name === '$root') lexer.failUnsupported(segment, '$root')
        if (name === '$count') lexer.fail(segment, "'$count' must follow a collection path, as in Lines/$count")
        if ((name !== '$it' && name !== '$this') || path.length > 0) lexer.fail(segment, `'${name}' is not allowed here`)
      }
      const next = lexer.peekChar()
      if (next === OPEN) {
        if (path.length > 0 && (lexer.lower === 'any' || lexer.lower === 'all')) {
          return this.parseLambda({ kind: 'member', path, position })
        }
        lexer.failUnsupported(segment, 'a function call or key predicate inside a path')
      }
      path.push(name)
      lexer.next()
      if (!lexer.is('/')) return { kind: 'member', path, position }
      lexer.next()
      if (!lexer.is('identifier')) lexer.expected("a property name after '/'")
    }
  }

  private parseLambda(collection: MemberSyntax): LambdaSyntax {
    const lexer = this.lexer
    const op = lexer.lower === 'any' ? 'any' : 'all'
    const keyword = lexer.start
    lexer.next()
    lexer.next() // `(`, seen by peekChar
    this.enter(keyword)
    let variable: string | undefined
    let predicate: ExpressionSyntax | undefined
    if (lexer.is(')')) {
      if (op === 'all') lexer.fail(keyword, 'all needs a lambda expression, as in Lines/all(l:l/Quantity gt 1)')
    } else {
      variable = this.readName('a lambda variable name')
      this.expect(':', "':' after the lambda variable")
      predicate = this.parseExpression()
      if (!lexer.is(')')) this.failAfterOperand("')'")
    }
    lexer.next()
    this.leave()
    return { kind: 'lambda', op, collection, variable, predicate, position: collection.position }
  }

  /** After the collection path, at `$count`: `$count` or `$count($filter=…)`. */
  private parseCount(collection: MemberSyntax): CountSyntax {
    const lexer = this.lexer
    lexer.next()
    let filter: ExpressionSyntax | undefined
    if (lexer.is('(')) {
      this.enter(lexer.start)
      lexer.next()
      for (;;) {
        const option = lexer.start
        const written = lexer.is('identifier') ? lexer.name : ''
        const name = (written.charCodeAt(0) === DOLLAR ? written.slice(1) : written).toLowerCase()
        if (name === 'search') lexer.failUnsupported(option, '$search')
        if (name !== 'filter') lexer.expected('$filter')
        if (filter !== undefined) lexer.fail(option, `${written} is given twice`)
        lexer.next()
        this.expect('=', `'=' after ${written}`)
        filter = this.parseExpression()
        if (lexer.is(')')) break
        if (!lexer.is(';')) this.failAfterOperand("';' or ')'")
        lexer.next()
      }
      lexer.next()
      this.leave()
    }
    return { kind: 'count', collection, filter, position: collection.position }
  }
}
