// The pattern of matchesPattern(): OData 4.01 names ECMAScript regular expressions, PostgreSQL
// runs its own (ARE, `~`). The binder accepts the part of the syntax both read alike, and
// writes it as ARE, so a pattern that passes here cannot fail or mean something else there:
//   \bada      →  \yada          (a word boundary; in ARE \b is a backspace)
//   \x41       →  \u0041         (ARE's \x takes every hex digit that follows)
//   [[:alpha:]]                  (POSIX classes, as ARE reads them; ECMAScript has none)
// Anything else (\p{L}, named groups, backreferences, flags) is a 400 naming the position.

import { QueryError } from '../../errors.ts'

const POSIX_CLASSES = new Set(['alnum', 'alpha', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'xdigit', 'word'])
const CLASS_ESCAPES = 'dDsSwW'
const CHARACTER_ESCAPES: Record<string, number> = { t: 9, n: 10, r: 13, f: 12, v: 11 }
// ARE's most repetitions of a bound (RE_DUP_MAX).
const MAX_REPEAT = 255

/** The pattern as PostgreSQL's `~` reads it, or a 400 saying what is not accepted and where. */
export function bindPattern(pattern: string, option: string): string {
  let at = 0
  let out = ''
  const fail = (problem: string) =>
    QueryError.invalid(`In ${option}, matchesPattern() cannot use the pattern '${pattern}': ${problem} at position ${at + 1}. Accepted: characters, . ^ $ | ( ) (?: ) (?= ) (?! ) (?<= ) (?<! ), * + ? {m,n} (also lazy), [...] with ranges and [:alpha:]-style classes, \\d \\s \\w \\b and their negations, \\t \\n \\r \\f \\v \\xhh \\uhhhh, and \\ before a punctuation character.`)
  const depth: number[] = []
  // Whether the last item can take a quantifier: an atom, not an anchor, a lookaround or another quantifier.
  let quantifiable = false

  /** An escape outside or inside brackets (after the backslash), as ARE text. */
  const escapeAt = (inBracket: boolean): { text: string; isClass: boolean } => {
    const c = pattern[at]
    if (c === undefined) throw fail('a pattern cannot end with \\')
    if (!/[0-9A-Za-z]/.test(c)) return { text: `\\${c}`, isClass: false }
    if (CLASS_ESCAPES.includes(c)) {
      if (inBracket && c === c.toUpperCase()) throw fail(`\\${c} is not accepted inside [...]`)
      return { text: `\\${c}`, isClass: true }
    }
    if (c in CHARACTER_ESCAPES) return { text: `\\${c}`, isClass: false }
    // Inside brackets \b is a backspace in both syntaxes.
    if (inBracket && c === 'b') return { text: '\\b', isClass: false }
    if (c === 'x' && /^[0-9A-Fa-f]{2}$/.test(pattern.slice(at + 1, at + 3))) {
      at += 2
      return { text: `\\u00${pattern.slice(at - 1, at + 1)}`, isClass: false }
    }
    if (c === 'u' && /^[0-9A-Fa-f]{4}$/.test(pattern.slice(at + 1, at + 5))) {
      at += 4
      return { text: `\\u${pattern.slice(at - 3, at + 1)}`, isClass: false }
    }
    if (!inBracket && (c === 'b' || c === 'B')) return { text: c === 'b' ? '\\y' : '\\Y', isClass: true }
    throw fail(`\\${c} is not accepted`)
  }

  const bracket = () => {
    let text = '['
    at++
    if (pattern[at] === '^') text += pattern[at++]
    let previous: number | undefined
    for (let first = true; ; first = false) {
      const c = pattern[at]
      if (c === undefined) throw fail('[ is not closed')
      if (c === ']' && !first) break
      if (c === '[' && pattern[at + 1] === ':') {
        const end = pattern.indexOf(':]', at + 2)
        const name = end < 0 ? '' : pattern.slice(at + 2, end)
        if (!POSIX_CLASSES.has(name)) throw fail(`[:${name}:] is no class (classes: ${[...POSIX_CLASSES].join(', ')})`)
        text += `[:${name}:]`
        at = end + 2
        previous = undefined
        continue
      }
      if (c === '[' && (pattern[at + 1] === '.' || pattern[at + 1] === '=')) throw fail(`[${pattern[at + 1]} is not accepted`)
      if (c === '-' && previous !== undefined && pattern[at + 1] !== ']' && pattern[at + 1] !== undefined) {
        at++
        const end = member()
        if (end.point === undefined) throw fail('a range must end with a character')
        if (end.point < previous) throw fail('a range must go upwards')
        text += `-${end.text}`
        previous = undefined
        continue
      }
      if (c === '-' && pattern[at + 1] !== ']') throw fail("a '-' inside [...] goes first, last or between two characters")
      const item = member()
      text += item.text
      previous = item.point
    }
    at++
    return `${text}]`
  }

  /** One character of a bracket expression (or a class escape), with its code point. */
  const member = (): { text: string; point: number | undefined } => {
    const c = pattern[at]
    if (c === '\\') {
      at++
      const start = at
      const { text, isClass } = escapeAt(true)
      at++
      if (isClass) return { text, point: undefined }
      const literal = pattern.slice(start, at)
      const point = /^[xu]/.test(literal) ? Number.parseInt(literal.slice(1), 16) : literal === 'b' ? 8 : (CHARACTER_ESCAPES[literal] ?? literal.codePointAt(0))
      return { text, point }
    }
    const character = String.fromCodePoint(pattern.codePointAt(at)!)
    at += character.length
    return { text: character === '[' ? '\\[' : character, point: character.codePointAt(0) }
  }

  while (at < pattern.length) {
    const c = pattern[at]
    if ('*+?'.includes(c) || (c === '{' && /^\{\d/.test(pattern.slice(at)))) {
      if (!quantifiable) throw fail(`'${c}' has nothing to repeat`)
      if (c === '{') {
        const bound = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at))
        if (!bound) throw fail('a bound is {m}, {m,} or {m,n}')
        const [text, low, , high] = bound
        if (Number(low) > MAX_REPEAT || Number(high || 0) > MAX_REPEAT) throw fail(`a bound is at most ${MAX_REPEAT}`)
        if (high && Number(high) < Number(low)) throw fail('a bound {m,n} needs m ≤ n')
        out += text
        at += text.length
      } else {
        out += c
        at++
      }
      if (pattern[at] === '?') out += pattern[at++]
      quantifiable = false
      continue
    }
    if (c === '(') {
      const head = /^\((\?(:|=|!|<=|<!))?/.exec(pattern.slice(at))![0]
      if (head === '(' && pattern[at + 1] === '?') throw fail(`'(?${pattern[at + 2] ?? ''}' is not accepted`)
      depth.push(head === '(' || head === '(?:' ? 1 : 0)
      out += head
      at += head.length
      quantifiable = false
      continue
    }
    if (c === ')') {
      const group = depth.pop()
      if (group === undefined) throw fail(') has no (')
      out += c
      at++
      quantifiable = group === 1
      continue
    }
    if (c === '[') {
      out += bracket()
      quantifiable = true
      continue
    }
    if (c === '\\') {
      at++
      const { text } = escapeAt(false)
      at++
      out += text
      quantifiable = text !== '\\y' && text !== '\\Y'
      continue
    }
    if (c === '^' || c === '$' || c === '|') {
      out += c
      at++
      quantifiable = false
      continue
    }
    const character = String.fromCodePoint(pattern.codePointAt(at)!)
    out += character
    at += character.length
    quantifiable = true
  }
  if (depth.length > 0) throw fail('( is not closed')
  return out
}
