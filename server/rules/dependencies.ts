// Which computed rules read an entity through a navigation, indexed once per model: the
// rules engine follows them to recompute parents and children, and a write loads ahead what
// they will read, so following them costs no extra round trip.

import type { CollectionProperty, EntityModel, Model, ReferenceProperty } from '../model/model.ts'
import type { ParentPrefetch } from '../persistence/unit-of-work.ts'

/**
 * A computed rule of `dependent` reading `tail` of another entity through `navigation` (`head`).
 * A bare collection (`from: ['Lines']`, `tail` empty) reads its membership: members added,
 * removed or moved recompute it, changes of their properties do not.
 */
export interface Dependency {
  readonly dependent: EntityModel
  readonly navigation: ReferenceProperty | CollectionProperty
  readonly head: string
  readonly tail: string
  /** The rule is a sumOf, which a write moves without reading the other members (moved-sums.ts). */
  readonly movable: boolean
}

const dependencyIndexes = new WeakMap<Model, Map<EntityModel, Dependency[]>>()

/** The computed rules that read `target` through a navigation. */
export function dependenciesOn(model: Model, target: EntityModel): readonly Dependency[] {
  let index = dependencyIndexes.get(model)
  if (!index) {
    index = new Map()
    for (const dependent of model.entities.values()) {
      for (const [name, rule] of dependent.rules.computed) {
        // A virtual value is computed when it is read, never by a write: what it reads changing
        // is no reason to load, recompute or validate the entities that show it.
        const property = dependent.properties.get(name)
        if (property?.kind === 'scalar' && property.decl.virtual) continue
        for (const source of rule.from) {
          const [head, tail = ''] = source.split('.')
          const navigation = dependent.properties.get(head)
          // A bare reference is one of the dependent's own properties: its change is its own.
          if (!navigation || navigation.kind === 'scalar' || (navigation.kind === 'reference' && !tail)) continue
          const list = index.get(navigation.target) ?? []
          list.push({ dependent, navigation, head, tail, movable: rule.sumOf !== undefined })
          index.set(navigation.target, list)
        }
      }
    }
    dependencyIndexes.set(model, index)
  }
  return index.get(target) ?? []
}

/**
 * The parents (and their members) whose computed rules a change of `changing` on `entity`
 * reaches, directly or through the entity's own computed properties: a line's Quantity feeds
 * its LineTotal, which the order's Total reads through Lines. `changing` undefined: the
 * entity goes (a delete reaches every such parent).
 */
export function parentsReachedBy(model: Model, entity: EntityModel, changing?: Iterable<string>): readonly ParentPrefetch[] {
  // Every write asks, and the answer depends only on the model: worked out once per set of names.
  let byChange = reachedParents.get(entity)
  if (!byChange) reachedParents.set(entity, (byChange = new Map()))
  const names = changing ? [...changing].sort() : undefined
  const key = names ? names.join('\u0000') : '\u0000'
  let parents = byChange.get(key)
  if (!parents) {
    parents = findParentsReachedBy(model, entity, names)
    if (byChange.size >= MAX_CHANGE_SETS) byChange.clear()
    byChange.set(key, parents)
  }
  return parents
}

/** Sets of changed names remembered per entity: a plugin has few, a client choosing properties at random no more than this. */
const MAX_CHANGE_SETS = 256

const reachedParents = new WeakMap<EntityModel, Map<string, readonly ParentPrefetch[]>>()

function findParentsReachedBy(model: Model, entity: EntityModel, changing?: Iterable<string>): readonly ParentPrefetch[] {
  const reached = changing ? ownClosure(entity, new Set(changing)) : undefined
  const prefetch = new Map<CollectionProperty, ParentPrefetch>()
  for (const { navigation, tail, movable } of dependenciesOn(model, entity)) {
    if (navigation.kind !== 'collection') continue
    if (reached && !reached.has(tail) && !reached.has(navigation.inverse.name)) continue
    // The members are loaded with the parent unless every rule the change reaches only moves a sum.
    const withMembers = !movable || prefetch.get(navigation)?.withMembers === true
    prefetch.set(navigation, { reference: navigation.inverse, members: navigation, withMembers })
  }
  return [...prefetch.values()]
}

/**
 * Whether a computed rule of `collection`'s entity reads its members one by one; false when
 * every one that reads them is a sumOf, which moves the stored sum instead (moved-sums.ts).
 */
export function readsMembers(model: Model, collection: CollectionProperty): boolean {
  return dependenciesOn(model, collection.target).some(({ navigation, movable }) => navigation === collection && !movable)
}

/** `names` and every own computed property that reads one of them, transitively. */
function ownClosure(entity: EntityModel, names: Set<string>): Set<string> {
  for (let grew = true; grew; ) {
    grew = false
    for (const [name, rule] of entity.rules.computed) {
      if (!names.has(name) && rule.from.some((source) => !source.includes('.') && names.has(source))) {
        names.add(name)
        grew = true
      }
    }
  }
  return names
}
