// $search (OData 4.01 URL Conventions 5.1.7, ABNF searchExpr): text → SearchSyntax.
//   blue OR "light green" NOT red  →  (or blue (and "light green" (not red)))
// Words are anything but blanks, parentheses and double quotes; a phrase is in double quotes
// (`\"` and `\\` escape). AND, OR and NOT are keywords only in upper case; two terms side by
// side mean AND. NOT binds tighter than AND, AND tighter than OR. Knows nothing of the model:
// which properties a word is looked for in is the binder's and compiler's business.

import { MAX_DEPTH, syntaxError, tooDeep } from './parse-errors.ts'
import type { SearchSyntax } from './syntax.ts'

type Token =
  | { readonly kind: 'word' | 'phrase'; readonly text: string; readonly position: number }
  | { readonly kind: '(' | ')' | 'AND' | 'OR' | 'NOT' | 'end'; readonly position: number }

export function parseSearch(text: string, option = '$search'): SearchSyntax {
  const reader = new SearchReader(text, option)
  const search = reader.or(0)
  if (reader.token.kind !== 'end') reader.fail(`AND, OR or end of input expected, found ${reader.describe()}`)
  return search
}

/**
 * Where a $search value ends inside a longer option, from `from`: at the first `;` or `)`
 * outside parentheses and phrases (`$expand=Orders($search=a OR b;$top=1)`, `search(…)`).
 */
export function searchEnd(text: string, from: number): number {
  let depth = 0
  for (let i = from; i < text.length; i++) {
    const c = text[i]
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
    } else if (c === '(') depth++
    else if (c === ')') {
      if (depth === 0) return i
      depth--
    } else if (c === ';' && depth === 0) return i
  }
  return text.length
}

class SearchReader {
  readonly #text: string
  readonly #option: string
  #pos = 0
  token: Token

  constructor(text: string, option: string) {
    this.#text = text
    this.#option = option
    this.token = this.#read()
  }

  fail(problem: string, position = this.token.position): never {
    throw syntaxError(this.#option, this.#text, position, problem)
  }

  describe(): string {
    const token = this.token
    if (token.kind === 'end') return 'end of input'
    return token.kind === 'word' || token.kind === 'phrase' ? `'${token.text.slice(0, 40)}'` : `'${token.kind}'`
  }

  or(depth: number): SearchSyntax {
    let left = this.and(depth)
    while (this.token.kind === 'OR') {
      this.#next()
      left = { kind: 'searchBinary', op: 'or', left, right: this.and(depth) }
    }
    return left
  }

  and(depth: number): SearchSyntax {
    let left = this.not(depth)
    for (;;) {
      const kind = this.token.kind
      if (kind === 'AND') this.#next()
      else if (kind !== 'word' && kind !== 'phrase' && kind !== 'NOT' && kind !== '(') return left
      left = { kind: 'searchBinary', op: 'and', left, right: this.not(depth) }
    }
  }

  not(depth: number): SearchSyntax {
    if (this.token.kind !== 'NOT') return this.primary(depth)
    if (depth >= MAX_DEPTH) throw tooDeep(this.#option, this.#text, this.token.position)
    this.#next()
    return { kind: 'searchNot', operand: this.not(depth + 1) }
  }

  primary(depth: number): SearchSyntax {
    const token = this.token
    if (token.kind === 'word' || token.kind === 'phrase') {
      this.#next()
      return { kind: 'searchTerm', text: token.text, phrase: token.kind === 'phrase', position: token.position }
    }
    if (token.kind === '(') {
      if (depth >= MAX_DEPTH) throw tooDeep(this.#option, this.#text, token.position)
      this.#next()
      const inner = this.or(depth + 1)
      if (this.token.kind !== ')') this.fail(`')' expected, found ${this.describe()}`)
      this.#next()
      return inner
    }
    return this.fail(`a word, a "phrase" or '(' expected, found ${this.describe()}`)
  }

  #next(): void {
    this.token = this.#read()
  }

  #read(): Token {
    const text = this.#text
    while (this.#pos < text.length && /\s/.test(text[this.#pos])) this.#pos++
    const position = this.#pos
    if (position >= text.length) return { kind: 'end', position }
    const c = text[position]
    if (c === '(' || c === ')') {
      this.#pos++
      return { kind: c, position }
    }
    if (c === '"') return this.#phrase(position)
    let end = position
    while (end < text.length && !/[\s()"]/.test(text[end])) end++
    this.#pos = end
    const word = text.slice(position, end)
    if (word === 'AND' || word === 'OR' || word === 'NOT') return { kind: word, position }
    return { kind: 'word', text: word, position }
  }

  #phrase(position: number): Token {
    const text = this.#text
    let value = ''
    for (let i = position + 1; i < text.length; i++) {
      const c = text[i]
      if (c === '"') {
        this.#pos = i + 1
        if (value.trim() === '') this.fail('an empty phrase', position)
        return { kind: 'phrase', text: value, position }
      }
      if (c === '\\') {
        const escaped = text[++i]
        if (escaped !== '"' && escaped !== '\\') this.fail('in a phrase, \\ escapes only " and \\', i - 1)
        value += escaped
      } else {
        value += c
      }
    }
    return this.fail('the phrase has no closing "', position)
  }
}

/** Terms and operators of a search, for MaxNodeCount; iterative, as a tree may be deep. */
export function countSearchNodes(search: SearchSyntax): number {
  let count = 0
  const pending: SearchSyntax[] = [search]
  while (pending.length > 0) {
    const node = pending.pop()!
    count++
    if (node.kind === 'searchNot') pending.push(node.operand)
    else if (node.kind === 'searchBinary') pending.push(node.left, node.right)
  }
  return count
}
