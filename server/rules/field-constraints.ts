// The constraints a plugin declares on properties (required, maximum length, ranges,
// enumeration values), checked on every write after the rules have run, so a computed or
// defaulted value is checked like a client's.

import type { ErrorDetail } from '../errors.ts'
import type { EntityModel } from '../model/model.ts'
import type { EntityView } from './entity-view.ts'
import { isEmpty } from './values.ts'

/** `publicName`: a property's name as the API's clients know it, in the messages; targets stay as declared (the unit names them). */
export function checkFieldConstraints(entity: EntityModel, view: EntityView, publicName: (declared: string) => string = (name) => name): ErrorDetail[] {
  const failures: ErrorDetail[] = []
  const fail = (target: string, message: string) => failures.push({ code: 'ValidationFailed', target, message })
  for (const property of entity.properties.values()) {
    if (property.kind === 'collection') continue
    const name = publicName(property.name)
    const value = view[property.name]
    if (property.kind === 'reference') {
      if (property.required && !value) fail(property.name, `${name} is required`)
      continue
    }
    const decl = property.decl
    if (decl.virtual || property.foreignKeyOf) continue
    if (isEmpty(value)) {
      if (decl.required && property.name !== 'Guid') fail(property.name, `${name} is required`)
      continue
    }
    if (decl.maxLength !== undefined && typeof value === 'string' && [...value].length > decl.maxLength) {
      fail(property.name, `${name} may have at most ${decl.maxLength} characters (has ${[...value].length})`)
    }
    if (decl.min !== undefined && typeof value === 'number' && value < decl.min) fail(property.name, `${name} must be at least ${decl.min}`)
    if (decl.max !== undefined && typeof value === 'number' && value > decl.max) fail(property.name, `${name} must be at most ${decl.max}`)
    if (decl.values && !decl.values.includes(value)) fail(property.name, `${name} must be one of ${decl.values.join(', ')}`)
  }
  return failures
}
