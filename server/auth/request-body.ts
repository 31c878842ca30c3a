// Reading the small JSON bodies of the auth endpoints. Field names match case-insensitively
// (`TenantId` as the specification writes it, `tenantId` for lower-camel clients); a missing
// field or one of the wrong type is 400 naming it.

import { RequestError } from '../errors.ts'

export type Body = Readonly<Record<string, unknown>>

export function bodyObject(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw RequestError.invalid('The request body must be a JSON object.')
  }
  return body as Body
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
