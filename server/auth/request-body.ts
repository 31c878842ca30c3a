// Reading the small JSON bodies of the auth endpoints. Field names match case-insensitively
// (`TenantId` as the specification writes it, `tenantId` for lower-camel clients); a missing
// field or one of the wrong type is 400 naming it, and a body with fields of other names is 400
// naming the fields it should have (a typo must not look like a wrong password).

import { RequestError } from '../errors.ts'

export type Body = Readonly<Record<string, unknown>>

export function bodyObject(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw RequestError.invalid('The request body must be a JSON object.')
  }
  return body as Body
}

/**
 * Checks that `body` has exactly the fields `names` (matched as field() does); 400 naming them,
 * written by `shown` (the naming policy's public casing), when one is missing or another is there.
 */
export function exactFields(body: Body, names: readonly string[], shown: (name: string) => string): void {
  const expected = `the body has the fields ${names.map(shown).join(', ')}`
  const known = new Set(names.map((name) => name.toLowerCase()))
  const unknown = Object.keys(body).filter((key) => !known.has(key.toLowerCase()))
  if (unknown.length > 0) {
    const list = unknown.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 100))).join(', ')
    throw RequestError.invalid(`Unknown field${unknown.length > 1 ? 's' : ''} ${list}: ${expected}.`, unknown[0].slice(0, 100))
  }
  const missing = names.find((name) => field(body, name) === undefined)
  if (missing !== undefined) throw RequestError.invalid(`${shown(missing)} is required: ${expected}.`, shown(missing))
}

export function field(body: Body, name: string): unknown {
  if (name in body) return body[name]
  const lower = name.toLowerCase()
  const key = Object.keys(body).find((k) => k.toLowerCase() === lower)
  return key === undefined ? undefined : body[key]
}

export function requiredString(body: Body, name: string, maxLength = 1024): string {
  const value = field(body, name)
  if (value === undefined || value === null || value === '') throw RequestError.invalid(`${name} is required.`, name)
  if (typeof value !== 'string') throw RequestError.invalid(`${name} must be a string.`, name)
  if (value.length > maxLength) throw RequestError.invalid(`${name} may have at most ${maxLength} characters.`, name)
  return value
}
