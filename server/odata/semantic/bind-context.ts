// What every binder needs: the model under the public naming policy, the limits, and the
// request's parameter aliases. Also what all binders share: name resolution with "did you
// mean". Binding does not look at the caller: authorize.ts checks the bound request.

import { QueryError } from '../../errors.ts'
import type { EntityModel, PropertyModel } from '../../model/model.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import type { ExpressionSyntax } from '../parser/syntax.ts'
import type { Range } from './bound.ts'
import { DEFAULT_NAMESPACE } from '../metadata/build-csdl.ts'

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

/**
 * A property path without its type casts (OData 4.01 URL Conventions §4.11, §5.1.1.9):
 * `entityctl.Order/Number`, `Customer/entityctl.Customer/Name`, `Lines/entityctl.OrderLine/any(…)`.
 * No type derives from another, so a cast to the type it follows changes nothing and is taken
 * off; one to any other type is 400 saying so (`where` begins the message). A qualified name
 * after a value is kept, for the path's binder to refuse as it refuses any name there.
 */
export function withoutTypeCasts(context: BindContext, entity: EntityModel, path: readonly string[], where: string): readonly string[] {
  if (!path.some(isQualified)) return path
  const kept: string[] = []
  let type: EntityModel | undefined = entity
  for (const segment of path) {
    if (type && isQualified(segment)) {
      const own = `${DEFAULT_NAMESPACE}.${type.name}`
      if (segment === own) continue
      throw QueryError.invalid(`${where} the type cast ${segment} does not apply to ${type.setName}, whose type is ${own}: no type derives from it, so ${own} is the only cast it takes.`, segment)
    }
    kept.push(segment)
    const property: PropertyModel | undefined = type && publicProperties(type, context.naming).get(segment)
    type = property && property.kind !== 'scalar' ? property.target : undefined
  }
  return kept
}

const isQualified = (segment: string) => segment.includes('.')
