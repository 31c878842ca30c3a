// What every binder needs: the model under the public naming policy, the limits, and the
// request's parameter aliases. Also what all binders share: name resolution with "did you
// mean". Binding does not look at the caller: authorize.ts checks the bound request.

import { QueryError } from '../../errors.ts'
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
  readonly limits: QueryLimits
  readonly aliases: ReadonlyMap<string, ExpressionSyntax>
  /** Hands out range ids; one counter per request so aliases never collide. */
  nextRange(entity: EntityModel): Range
}

export function createBindContext(
  naming: NamingPolicy,
  limits: QueryLimits,
  aliases: ReadonlyMap<string, ExpressionSyntax> = new Map(),
): BindContext {
  let counter = 0
  return { naming, limits, aliases, nextRange: (entity) => ({ id: counter++, entity }) }
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
