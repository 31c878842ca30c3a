// What rules and methods see of an entity: a plain-looking object over the managed MikroORM
// entity. Scalars read as JSON-like values (decimals as numbers, dates as 'YYYY-MM-DD'),
// references as views of the loaded target (undefined when not loaded), collections as
// arrays of views. Writing a scalar writes the entity, so the unit of work sees the change.

import { Collection, helper, Reference } from '@mikro-orm/core'
import type { EntityModel, Model } from '../model/model.ts'
import { toRuleValue } from './values.ts'

const VIEW = Symbol('entityView')

export type EntityView = Record<string, any>

/**
 * Views of one unit of work. The rules engine gives collections their members explicitly
 * (loaded rows, plus entities created in this unit of work, minus removed ones), so rules
 * see the state being saved without touching the ORM's collections.
 */
export class ViewScope {
  readonly model: Model
  readonly #views = new WeakMap<object, EntityView>()
  readonly #collections = new WeakMap<object, Map<string, readonly object[]>>()

  constructor(model: Model) {
    this.model = model
  }

  view(entity: object): EntityView {
    return viewOf(this, entity)
  }

  setCollection(entity: object, navigation: string, members: readonly object[]): void {
    let byName = this.#collections.get(entity)
    if (!byName) this.#collections.set(entity, (byName = new Map()))
    byName.set(navigation, members)
  }

  collection(entity: object, navigation: string): readonly object[] | undefined {
    return this.#collections.get(entity)?.get(navigation)
  }

  cached(entity: object): EntityView | undefined {
    return this.#views.get(entity)
  }

  remember(entity: object, view: EntityView): void {
    this.#views.set(entity, view)
  }
}

function viewOf(scope: ViewScope, entity: object): EntityView {
  const model = scope.model
  const existing = scope.cached(entity)
  if (existing) return existing
  const meta = model.entities.get(helper(entity).__meta.className)
  if (!meta) throw new Error(`no model for ${helper(entity).__meta.className}`)
  const view = new Proxy(entity as Record<string | symbol, any>, {
    get(target, key) {
      if (key === VIEW) return target
      if (typeof key !== 'string') return undefined
      const property = meta.properties.get(key)
      if (!property) return undefined
      if (property.kind === 'scalar' && property.foreignKeyOf) {
        const reference = target[property.foreignKeyOf.name]
        return reference ? helper(Reference.unwrapReference(reference)).getPrimaryKey() : null
      }
      const value = target[key]
      if (property.kind === 'scalar') return toRuleValue(property, value)
      if (property.kind === 'reference') {
        const loaded = Reference.unwrapReference(value ?? undefined)
        return loaded && helper(loaded).__initialized ? viewOf(scope, loaded) : loaded ? { Guid: helper(loaded).getPrimaryKey() } : undefined
      }
      const members = scope.collection(target, key)
      if (members) return members.map((item) => viewOf(scope, item))
      const collection = value as Collection<object> | undefined
      return collection?.isInitialized() ? collection.getItems().map((item) => viewOf(scope, item)) : undefined
    },
    set(target, key, value) {
      if (typeof key !== 'string') return false
      const property = meta.properties.get(key)
      if (!property || property.kind !== 'scalar') {
        throw new TypeError(`${meta.name}.${key} cannot be set here: only scalar properties are writable from rules and methods`)
      }
      target[key] = value
      return true
    },
    has: (_target, key) => typeof key === 'string' && meta.properties.has(key),
    ownKeys: () => [...meta.properties.keys()],
    getOwnPropertyDescriptor: (_target, key) =>
      typeof key === 'string' && meta.properties.has(key) ? { enumerable: true, configurable: true } : undefined,
  })
  scope.remember(entity, view)
  return view
}

/** The managed entity behind a view (or the entity itself). */
export function entityOf(view: object): object {
  return (view as Record<symbol, object>)[VIEW] ?? view
}

export function entityModelOf(model: Model, entity: object): EntityModel {
  return model.entities.get(helper(entity).__meta.className)!
}
