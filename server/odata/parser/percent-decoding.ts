// Percent-decoding of one URL component (a path segment, a query option name or value), done
// exactly once and only after the URL was split at `/`, `&` and `=` (OData 4.01 URL Conventions
// 2.1), so an encoded `%26` inside a string literal stays part of it. `+` is left alone: in a
// URL it is a plus sign (RFC 3986), not the form-encoding of a space.

import { syntaxError } from './parse-errors.ts'

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
}

/**
 * Decodes `whole.slice(from, to)`; a malformed escape or invalid UTF-8 is a 400 naming `what`
 * and the position in `whole`.
 */
export function decodeComponent(whole: string, from: number, to: number, what: string): string {
  const raw = whole.slice(from, to)
  if (raw.indexOf('%') < 0) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    for (let i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', i + 1)) {
      if (i + 2 >= raw.length || !isHex(raw.charCodeAt(i + 1)) || !isHex(raw.charCodeAt(i + 2))) {
        throw syntaxError(what, whole, from + i, `malformed percent-encoding '${raw.slice(i, i + 3)}'`)
      }
    }
    throw syntaxError(what, whole, from + raw.indexOf('%'), 'percent-encoded bytes that are not UTF-8')
  }
}
