// What every binder needs: the model under the public naming policy, the caller's access,
// the limits, and the request's parameter aliases. Also the checks shared by all binders:
// name resolution with "did you mean", read permission on every entity reached.

import { AuthError, QueryError } from '../../errors.ts'
import type { AccessContext } from '../../auth/access-context.ts'
import { can } from '../../auth/access-context.ts'
import type { EntityModel, PropertyModel } from '../../model/model.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import type { ExpressionSyntax } from '../parser/syntax.ts'
import type { Range } from './bound.ts'

export interface QueryLimits {
  readonly maxTop: number
  readonly maxNodeCount: number
  readonly maxExpansionDepth: number
}

export interface BindContext {
  readonly naming: NamingPolicy
  readonly access: AccessContext | undefined
  readonly limits: QueryLimits
  readonly aliases: ReadonlyMap<string, ExpressionSyntax>
  /** Hands out range ids; one counter per request so aliases never collide. */
  nextRange(entity: EntityModel): Range
}

export function createBindContext(
  naming: NamingPolicy,
  access: AccessContext | undefined,
  limits: QueryLimits,
  aliases: ReadonlyMap<string, ExpressionSyntax> = new Map(),
): BindContext {
  let counter = 0
  return { naming, access, limits, aliases, nextRange: (entity) => ({ id: counter++, entity }) }
}

const publicIndexes = new WeakMap<EntityModel, Map<boolean, Map<string, PropertyModel>>>()

/** The entity's properties by public name (Pascal, or lower camel when the option is on). */
export function publicProperties(entity: EntityModel, naming: NamingPolicy): ReadonlyMap<string, PropertyModel> {
  let byCasing = publicIndexes.get(entity)
  if (!byCasing) publicIndexes.set(entity, (byCasing = new Map()))
  let index = byCasing.get(naming.lowerCamelCase)
  if (!index) {
    index = new Map([...entity.properties.values()].map((p) => [naming.toPublic(p.name), p]))
    byCasing.set(naming.lowerCamelCase, index)
  }
  return index
}

export function resolveProperty(context: BindContext, entity: EntityModel, name: string): PropertyModel {
  const properties = publicProperties(entity, context.naming)
  const property = properties.get(name)
  if (!property) throw QueryError.unknownProperty(entity.setName, name, properties.keys())
  return property
}

/** $expand and navigation paths need read permission on every entity they reach (decisions.md). */
export function requireRead(context: BindContext, entity: EntityModel): void {
  if (context.access && !can(context.access, entity.name, 'read')) {
    throw AuthError.forbidden(`Reading ${entity.setName} needs the read permission on ${entity.name}, which your responsibilities do not grant.`)
  }
}
