// Tokens of the OData common expression grammar (OData 4.01 ABNF, section 4 and 7), read from
// one decoded option value. It scans char codes, one token at a time: the parser reads the
// current token from the fields below and calls next(). Literals are recognised here and come
// out as finished LiteralSyntax nodes, so the parser never re-reads their text.
//
//   Name eq 'O''Neil' and Total gt 1.5e3   →   Name · eq · 'O''Neil' · and · Total · gt · 1.5e3
//
// Whitespace (space, tab, i.e. %20 and %09 once decoded) separates tokens and is otherwise
// skipped. A `+` is a plus sign, never a space (RFC 3986 and the OData ABNF: SIGN = "+" / "%2B",
// RWS = SP / HTAB / "%20" / "%09"); form-encoded spaces get an error that says so.

import { syntaxError, unsupported } from './parse-errors.ts'
import type { LiteralSyntax } from './syntax.ts'

export type TokenKind = 'end' | 'identifier' | 'alias' | 'literal' | '(' | ')' | ',' | '/' | ':' | '*' | '=' | ';' | '-'

const TAB = 9
const SPACE = 32
const DOLLAR = 36
const QUOTE = 39
const OPEN = 40
const CLOSE = 41
const STAR = 42
const PLUS = 43
const COMMA = 44
const MINUS = 45
const DOT = 46
const SLASH = 47
const ZERO = 48
const NINE = 57
const COLON = 58
const SEMI = 59
const EQUALS = 61
const AT = 64
const UNDERSCORE = 95

const UNICODE_START = /^[\p{L}\p{Nl}]$/u
const UNICODE_PART = /^[\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]$/u

const PUNCTUATION: Readonly<Record<number, TokenKind>> = {
  [OPEN]: '(',
  [CLOSE]: ')',
  [COMMA]: ',',
  [SLASH]: '/',
  [COLON]: ':',
  [STAR]: '*',
  [EQUALS]: '=',
  [SEMI]: ';',
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE
}

function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
}

function codePointIs(text: string, pos: number, pattern: RegExp): boolean {
  const cp = text.codePointAt(pos)
  return cp !== undefined && pattern.test(String.fromCodePoint(cp))
}

function isIdentifierStart(text: string, pos: number): boolean {
  const c = text.charCodeAt(pos)
  if (c < 128) return isAsciiLetter(c) || c === UNDERSCORE
  return codePointIs(text, pos, UNICODE_START)
}

function isIdentifierPart(text: string, pos: number): boolean {
  const c = text.charCodeAt(pos)
  if (c < 128) return isAsciiLetter(c) || isDigit(c) || c === UNDERSCORE
  return codePointIs(text, pos, UNICODE_PART)
}

/** Length in UTF-16 units of the code point at pos (2 for astral characters). */
function widthAt(text: string, pos: number): number {
  const c = text.charCodeAt(pos)
  return c >= 0xd800 && c <= 0xdbff ? 2 : 1
}

/** Number of digits from pos on. */
function digitsAt(text: string, pos: number): number {
  let end = pos
  while (end < text.length && isDigit(text.charCodeAt(end))) end++
  return end - pos
}

function twoDigits(text: string, pos: number): number {
  return (text.charCodeAt(pos) - ZERO) * 10 + (text.charCodeAt(pos + 1) - ZERO)
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Identifiers up to this length get a lower-cased copy for keyword tests (the longest keyword is 14). */
const KEYWORD_LENGTH = 14

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

export class Lexer {
  readonly text: string
  /** The option the text belongs to, for error messages: `$filter`, `$expand`, `@p`. */
  readonly option: string
  kind: TokenKind = 'end'
  /** Offset of the current token's first character. */
  start = 0
  /** Offset just past the current token. */
  end = 0
  /** Identifier as written (dots and a leading `$` included); alias with its `@`. */
  name = ''
  /** Lower-cased identifier when short enough to be a keyword (`eq`, `countdistinct`), else ''. */
  lower = ''
  /** The literal, when kind is 'literal'. */
  literal: LiteralSyntax | undefined = undefined
  private pos = 0

  constructor(text: string, option: string) {
    this.text = text
    this.option = option
    this.next()
  }

  fail(position: number, problem: string): never {
    throw syntaxError(this.option, this.text, position, problem)
  }

  failUnsupported(position: number, what: string): never {
    throw unsupported(this.option, this.text, position, what)
  }

  /** The current token for messages: `'eqq'`, or `end of input`. */
  describe(): string {
    if (this.kind === 'end') return 'end of input'
    const token = this.text.slice(this.start, this.end)
    return `'${token.length > 40 ? `${token.slice(0, 40)}…` : token}'`
  }

  /** Fails with "<what> expected, found <current token>". */
  expected(what: string): never {
    return this.fail(this.start, `${what} expected, found ${this.describe()}`)
  }

  /** The char code after the current token, skipping whitespace; -1 at the end. */
  peekChar(): number {
    const text = this.text
    let pos = this.end
    while (pos < text.length) {
      const c = text.charCodeAt(pos)
      if (c !== SPACE && c !== TAB) return c
      pos++
    }
    return -1
  }

  /** Whether the current token is of that kind (a call, so TypeScript does not narrow across next()). */
  is(kind: TokenKind): boolean {
    return this.kind === kind
  }

  /** Whether the current token is the keyword (case-insensitive, compared lower-cased). */
  isKeyword(keyword: string): boolean {
    return this.kind === 'identifier' && this.lower === keyword
  }

  /**
   * Goes on lexing from `position`, past text another reader took over ($search inside
   * $expand and $apply, whose words are not OData expression tokens).
   */
  resumeAt(position: number): void {
    this.pos = position
    this.next()
  }

  next(): void {
    const text = this.text
    const length = text.length
    let pos = this.pos
    while (pos < length) {
      const c = text.charCodeAt(pos)
      if (c !== SPACE && c !== TAB) break
      pos++
    }
    this.start = pos
    this.literal = undefined
    if (pos >= length) {
      this.setToken('end', pos)
      return
    }
    const c = text.charCodeAt(pos)
    const punctuation = PUNCTUATION[c]
    if (punctuation !== undefined) {
      this.setToken(punctuation, pos + 1)
    } else if (c === QUOTE) {
      this.scanString(pos)
    } else if (isDigit(c)) {
      this.scanNumeric(pos)
    } else if (c === MINUS || c === PLUS) {
      this.scanSign(pos, c)
    } else if (c === DOLLAR) {
      this.scanDollar(pos)
    } else if (c === AT) {
      this.scanAlias(pos)
    } else if (isIdentifierStart(text, pos)) {
      if (isHex(c) && this.isGuidAt(pos)) this.setLiteral('guid', text.slice(pos, pos + 36).toLowerCase(), pos + 36)
      else this.scanIdentifier(pos)
    } else if (c === 34) {
      this.fail(pos, "unexpected '\"' (string literals are enclosed in single quotes: 'text')")
    } else if (c === 91 || c === 123) {
      this.failUnsupported(pos, 'a JSON array or object literal')
    } else {
      this.fail(pos, `unexpected character '${String.fromCodePoint(text.codePointAt(pos) ?? c)}'`)
    }
  }

  private setToken(kind: TokenKind, end: number): void {
    this.kind = kind
    this.end = end
    this.pos = end
  }

  private setLiteral(type: LiteralSyntax['type'], value: LiteralSyntax['value'], end: number): void {
    this.literal = { kind: 'literal', type, value, text: this.text.slice(this.start, end), position: this.start } as LiteralSyntax
    this.setToken('literal', end)
  }

  // ── names ──────────────────────────────────────────────────────────────────────────────

  /** End of one identifier part starting at pos (which must be an identifier start). */
  private identifierPartEnd(pos: number): number {
    const text = this.text
    pos += widthAt(text, pos)
    while (pos < text.length && isIdentifierPart(text, pos)) pos += widthAt(text, pos)
    return pos
  }

  /** `Name`, `Sales.Color`, `Sales.*`, and literals led by a name: `true`, `duration'P1D'`. */
  private scanIdentifier(start: number): void {
    const text = this.text
    let pos = this.identifierPartEnd(start)
    while (pos < text.length && text.charCodeAt(pos) === DOT) {
      if (pos + 1 < text.length && text.charCodeAt(pos + 1) === STAR) {
        pos += 2
        break
      }
      if (pos + 1 >= text.length || !isIdentifierStart(text, pos + 1)) break
      pos = this.identifierPartEnd(pos + 1)
    }
    const name = text.slice(start, pos)
    if (pos < text.length && text.charCodeAt(pos) === QUOTE && isLiteralPrefix(name)) {
      this.scanPrefixedLiteral(name, pos)
      return
    }
    switch (name) {
      case 'null':
        return this.setLiteral('null', null, pos)
      case 'INF':
        return this.setLiteral('double', Infinity, pos)
      case 'NaN':
        return this.setLiteral('double', NaN, pos)
    }
    const lower = name.length <= KEYWORD_LENGTH ? name.toLowerCase() : ''
    if (lower === 'true' || lower === 'false') return this.setLiteral('boolean', lower === 'true', pos)
    this.name = name
    this.lower = lower
    this.setToken('identifier', pos)
  }

  /** `$it`, `$this`, `$count`, `$filter`… (the parser decides which are allowed where). */
  private scanDollar(start: number): void {
    if (start + 1 >= this.text.length || !isIdentifierStart(this.text, start + 1)) this.fail(start, "unexpected '$'")
    const end = this.identifierPartEnd(start + 1)
    this.name = this.text.slice(start, end)
    this.lower = this.name.length <= KEYWORD_LENGTH ? this.name.toLowerCase() : ''
    this.setToken('identifier', end)
  }

  private scanAlias(start: number): void {
    const text = this.text
    if (start + 1 >= text.length || !isIdentifierStart(text, start + 1)) {
      this.fail(start, "a parameter alias name expected after '@'")
    }
    const end = this.identifierPartEnd(start + 1)
    if (end < text.length && text.charCodeAt(end) === DOT) this.failUnsupported(start, 'an annotation in an expression')
    this.name = text.slice(start, end)
    this.lower = ''
    this.setToken('alias', end)
  }

  // ── quoted literals ────────────────────────────────────────────────────────────────────

  /** End of the quoted text whose opening quote is at `quote`; the value has `''` unescaped. */
  private quotedEnd(quote: number): { value: string; end: number } {
    const text = this.text
    let value = ''
    let chunk = quote + 1
    let pos = chunk
    for (;;) {
      const next = text.indexOf("'", pos)
      if (next < 0) this.fail(quote, 'unterminated string literal: closing quote expected')
      if (next + 1 < text.length && text.charCodeAt(next + 1) === QUOTE) {
        value += text.slice(chunk, next + 1)
        pos = next + 2
        chunk = pos
        continue
      }
      return { value: value + text.slice(chunk, next), end: next + 1 }
    }
  }

  private scanString(start: number): void {
    const { value, end } = this.quotedEnd(start)
    this.setLiteral('string', value, end)
  }

  /** `duration'P1D'`, `binary'AAE='`, `Sales.Color'Red'`. */
  private scanPrefixedLiteral(prefix: string, quote: number): void {
    const { value, end } = this.quotedEnd(quote)
    const lower = prefix.toLowerCase()
    if (lower === 'duration') {
      if (!isDuration(value)) this.fail(quote + 1, `invalid duration '${value}' (days, hours, minutes and seconds, no years or months: e.g. P1DT2H30M)`)
      this.setLiteral('duration', value, end)
    } else if (lower === 'binary') {
      if (!isBase64Url(value)) this.fail(quote + 1, `invalid binary literal '${value}' (expected base64url)`)
      this.setLiteral('binary', value, end)
    } else if (lower === 'geography' || lower === 'geometry') {
      this.failUnsupported(this.start, `the ${lower} literal`)
    } else {
      if (!isEnumValue(value)) this.fail(quote + 1, `invalid enumeration value '${value}'`)
      this.literal = { kind: 'literal', type: 'enum', value, enumType: prefix, text: this.text.slice(this.start, end), position: this.start }
      this.setToken('literal', end)
    }
  }

  // ── numbers, dates, times, GUIDs ───────────────────────────────────────────────────────

  private scanSign(start: number, sign: number): void {
    const text = this.text
    const after = start + 1
    if (after < text.length && isDigit(text.charCodeAt(after))) {
      this.scanNumber(start, after)
    } else if (sign === MINUS && text.startsWith('INF', after) && !(after + 3 < text.length && isIdentifierPart(text, after + 3))) {
      this.setLiteral('double', -Infinity, after + 3)
    } else if (sign === MINUS) {
      this.setToken('-', after)
    } else {
      this.fail(start, "unexpected '+' (in a URL '+' is a plus sign, not a space: encode spaces as %20)")
    }
  }

  /** At a digit: a GUID, date, date-time offset, time of day or number. */
  private scanNumeric(start: number): void {
    const text = this.text
    if (this.isGuidAt(start)) {
      this.setLiteral('guid', text.slice(start, start + 36).toLowerCase(), start + 36)
      return
    }
    const digits = digitsAt(text, start)
    if (digits === 4 && text.charCodeAt(start + 4) === MINUS) {
      this.scanDate(start)
    } else if (digits === 2 && text.charCodeAt(start + 2) === COLON) {
      const end = this.timeEnd(start)
      this.checkEndOfLiteral(end, 'time of day')
      this.setLiteral('timeOfDay', text.slice(start, end), end)
    } else {
      this.scanNumber(start, start)
    }
  }

  /** 8-4-4-4-12 hex digits, not followed by another name character. */
  private isGuidAt(pos: number): boolean {
    const text = this.text
    if (pos + 36 > text.length) return false
    for (let i = 0; i < 36; i++) {
      const c = text.charCodeAt(pos + i)
      if (i === 8 || i === 13 || i === 18 || i === 23) {
        if (c !== MINUS) return false
      } else if (!isHex(c)) {
        return false
      }
    }
    return !(pos + 36 < text.length && isIdentifierPart(text, pos + 36))
  }

  private scanDate(start: number): void {
    const text = this.text
    const dateEnd = start + 10
    if (
      digitsAt(text, start + 5) !== 2 ||
      text.charCodeAt(start + 7) !== MINUS ||
      digitsAt(text, start + 8) !== 2
    ) {
      this.fail(start, `invalid date '${text.slice(start, Math.min(text.length, start + 10))}' (expected YYYY-MM-DD)`)
    }
    const year = Number(text.slice(start, start + 4))
    const month = twoDigits(text, start + 5)
    const day = twoDigits(text, start + 8)
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
    const days = month === 2 && !leap ? 28 : DAYS_IN_MONTH[month - 1]
    if (month < 1 || month > 12 || day < 1 || days === undefined || day > days) {
      this.fail(start, `invalid date '${text.slice(start, dateEnd)}': no such day`)
    }
    const t = text.charCodeAt(dateEnd)
    if (t !== 84 && t !== 116) {
      this.checkEndOfLiteral(dateEnd, 'date')
      this.setLiteral('date', text.slice(start, dateEnd), dateEnd)
      return
    }
    // date "T" time ( "Z" / SIGN hour ":" minute )
    let end = this.timeEnd(dateEnd + 1)
    const zone = text.charCodeAt(end)
    if (zone === 90 || zone === 122) {
      end += 1
    } else if (zone === PLUS || zone === MINUS) {
      if (digitsAt(text, end + 1) !== 2 || text.charCodeAt(end + 3) !== COLON || digitsAt(text, end + 4) !== 2) {
        this.fail(end, "invalid time zone offset (expected Z, +hh:mm or -hh:mm; a '+' must not be sent as a space)")
      }
      if (twoDigits(text, end + 1) > 23 || twoDigits(text, end + 4) > 59) this.fail(end, 'invalid time zone offset')
      end += 6
    } else {
      this.fail(end, "time zone expected in date-time offset (Z, +hh:mm or -hh:mm; a '+' must not be sent as a space)")
    }
    this.checkEndOfLiteral(end, 'date-time offset')
    this.setLiteral('dateTimeOffset', text.slice(start, end), end)
  }

  /** End of `hh:mm[:ss[.fffffffffffff]]` starting at pos; fails if malformed. */
  private timeEnd(pos: number): number {
    const text = this.text
    if (digitsAt(text, pos) !== 2 || text.charCodeAt(pos + 2) !== COLON || digitsAt(text, pos + 3) !== 2) {
      this.fail(pos, 'invalid time (expected hh:mm or hh:mm:ss)')
    }
    if (twoDigits(text, pos) > 23 || twoDigits(text, pos + 3) > 59) this.fail(pos, `invalid time '${text.slice(pos, pos + 5)}'`)
    let end = pos + 5
    if (text.charCodeAt(end) === COLON) {
      if (digitsAt(text, end + 1) !== 2 || twoDigits(text, end + 1) > 60) this.fail(end + 1, 'invalid seconds')
      end += 3
      if (text.charCodeAt(end) === DOT) {
        const fraction = digitsAt(text, end + 1)
        if (fraction < 1 || fraction > 12) this.fail(end + 1, 'invalid fractional seconds (1 to 12 digits)')
        end += 1 + fraction
      }
    }
    return end
  }

  private checkEndOfLiteral(end: number, what: string): void {
    const text = this.text
    if (end < text.length && (isIdentifierPart(text, end) || text.charCodeAt(end) === DOT || text.charCodeAt(end) === COLON)) {
      this.fail(this.start, `invalid ${what} '${text.slice(this.start, end + 1)}'`)
    }
  }

  /** `[sign] digits [. digits] [e [sign] digits]` from start (the sign, if any) on. */
  private scanNumber(start: number, digitsStart: number): void {
    const text = this.text
    let end = digitsStart + digitsAt(text, digitsStart)
    let type: 'int' | 'decimal' | 'double' = 'int'
    if (text.charCodeAt(end) === DOT) {
      const fraction = digitsAt(text, end + 1)
      if (fraction === 0) this.fail(start, `invalid number '${text.slice(start, end + 1)}': digits expected after '.'`)
      end += 1 + fraction
      type = 'decimal'
    }
    const e = text.charCodeAt(end)
    if (e === 101 || e === 69) {
      let exponent = end + 1
      const sign = text.charCodeAt(exponent)
      if (sign === PLUS || sign === MINUS) exponent++
      const digits = digitsAt(text, exponent)
      if (digits === 0) this.fail(start, `invalid number '${text.slice(start, exponent)}': exponent digits expected`)
      end = exponent + digits
      type = 'double'
    }
    this.checkEndOfLiteral(end, 'number')
    const literal = text.slice(start, end)
    if (type === 'double') return this.setLiteral('double', Number(literal), end)
    if (type === 'decimal') return this.setLiteral('decimal', literal.charCodeAt(0) === PLUS ? literal.slice(1) : literal, end)
    if (end - digitsStart <= 15) return this.setLiteral('int', Number(literal), end)
    const big = BigInt(literal)
    if (big < INT64_MIN || big > INT64_MAX) {
      // Too big for Edm.Int64: the ABNF reads it as a decimal literal.
      return this.setLiteral('decimal', literal.charCodeAt(0) === PLUS ? literal.slice(1) : literal, end)
    }
    const small = Number(big)
    this.setLiteral('int', Number.isSafeInteger(small) ? small : big, end)
  }
}

/**
 * Whether a name right before a quote starts a typed literal (`duration'…'`, `binary'…'`,
 * `Sales.Color'…'`). Other names stay names, so `Name eq'x'` reads as `Name eq 'x'`.
 */
function isLiteralPrefix(name: string): boolean {
  if (name.includes('.')) return !name.endsWith('.*')
  const lower = name.toLowerCase()
  return lower === 'duration' || lower === 'binary' || lower === 'geography' || lower === 'geometry'
}

/** `[-]P[nD][T[nH][nM][n[.n]S]]` with at least one component (xs:dayTimeDuration). */
export function isDuration(value: string): boolean {
  let pos = 0
  if (value.charCodeAt(pos) === MINUS) pos++
  if (value.charCodeAt(pos) !== 80 && value.charCodeAt(pos) !== 112) return false
  pos++
  let components = 0
  let digits = digitsAt(value, pos)
  if (digits > 0 && (value.charCodeAt(pos + digits) === 68 || value.charCodeAt(pos + digits) === 100)) {
    pos += digits + 1
    components++
  }
  if (pos < value.length) {
    const t = value.charCodeAt(pos)
    if (t !== 84 && t !== 116) return false
    pos++
    let timeComponents = 0
    for (const unit of [72, 77]) {
      digits = digitsAt(value, pos)
      const u = value.charCodeAt(pos + digits)
      if (digits > 0 && (u === unit || u === unit + 32)) {
        pos += digits + 1
        timeComponents++
      }
    }
    digits = digitsAt(value, pos)
    if (digits > 0) {
      let end = pos + digits
      if (value.charCodeAt(end) === DOT) {
        const fraction = digitsAt(value, end + 1)
        if (fraction === 0) return false
        end += 1 + fraction
      }
      const s = value.charCodeAt(end)
      if (s !== 83 && s !== 115) return false
      pos = end + 1
      timeComponents++
    }
    if (timeComponents === 0) return false
    components += timeComponents
  }
  return components > 0 && pos === value.length
}

function isBase64Url(value: string): boolean {
  let end = value.length
  while (end > 0 && value.charCodeAt(end - 1) === EQUALS && value.length - end < 2) end--
  for (let i = 0; i < end; i++) {
    const c = value.charCodeAt(i)
    if (!(isAsciiLetter(c) || isDigit(c) || c === MINUS || c === UNDERSCORE)) return false
  }
  return end % 4 !== 1
}

/** `Red`, `Red,Blue`, `5`: members or integers separated by commas. */
function isEnumValue(value: string): boolean {
  if (value.length === 0) return false
  for (const member of value.split(',')) {
    if (member.length === 0) return false
    const numeric = member.charCodeAt(0) === MINUS ? member.slice(1) : member
    if (numeric.length > 0 && digitsAt(numeric, 0) === numeric.length) continue
    if (!isIdentifierStart(member, 0)) return false
    for (let i = 1; i < member.length; i++) if (!isIdentifierPart(member, i)) return false
  }
  return true
}
