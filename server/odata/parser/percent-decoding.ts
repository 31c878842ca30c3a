// Percent-decoding of one URL component (a path segment, a query option name or value), done
// exactly once and only after the URL was split at `/`, `&` and `=` (OData 4.01 URL Conventions
// 2.1), so an encoded `%26` inside a string literal stays part of it. `+` is left alone: in a
// URL it is a plus sign (RFC 3986), not the form-encoding of a space.

import { syntaxError } from './parse-errors.ts'

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
}

/**
 * Decodes `whole.slice(from, to)`; a malformed escape, invalid UTF-8 (`%C3%28`, `%FF`) or a
 * NUL (`%00`) is a 400 naming `what` and the position in `whole`. decodeURIComponent never
 * yields a lone surrogate: an encoded one is invalid UTF-8.
 */
export function decodeComponent(whole: string, from: number, to: number, what: string): string {
  const raw = whole.slice(from, to)
  if (raw.indexOf('%') < 0) return raw
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    for (let i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', i + 1)) {
      if (i + 2 >= raw.length || !isHex(raw.charCodeAt(i + 1)) || !isHex(raw.charCodeAt(i + 2))) {
        throw syntaxError(what, whole, from + i, `malformed percent-encoding '${raw.slice(i, i + 3)}'`)
      }
    }
    throw syntaxError(what, whole, from + firstInvalidRun(raw), 'percent-encoded bytes that are not UTF-8')
  }
  // A raw NUL cannot reach here (Node's HTTP parser refuses it), an encoded one can; no name
  // or value of this service may hold it, and PostgreSQL text cannot.
  const nul = raw.indexOf('%00')
  if (nul >= 0) throw syntaxError(what, whole, from + nul, "a NUL character (%00), which no name or value may hold")
  return decoded
}

/** Offset of the first run of consecutive escapes (`%C3%28`) that is not UTF-8 on its own. */
function firstInvalidRun(raw: string): number {
  for (let i = raw.indexOf('%'); i >= 0; ) {
    let end = i
    while (raw.charCodeAt(end) === 37) end += 3
    try {
      decodeURIComponent(raw.slice(i, end))
    } catch {
      return i
    }
    i = raw.indexOf('%', end)
  }
  return raw.indexOf('%')
}
