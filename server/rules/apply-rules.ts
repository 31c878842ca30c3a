// The business rules of every write, run by the flush subscriber before MikroORM computes
// its change sets, whatever started the write (HTTP, a method, the CLI, a workflow):
//
//   defaults (new entities, empty properties) → corrections (values set) → computed
//   (in dependency order, recomputed when what they read changed, across entities) →
//   field constraints and validations (all failures reported together).
//
// A failure throws ValidationFailed before anything is written; the caller's transaction
// rolls back, so nothing of the unit of work is committed.

import { helper, LockMode, Reference, type EntityManager, type UnitOfWork } from '@mikro-orm/core'
import { validationFailed, type ErrorDetail } from '../errors.ts'
import type { RuleContext } from '../model/declarations.ts'
import type { CollectionProperty, EntityModel, Model, ReferenceProperty } from '../model/model.ts'
import { computedOrder } from '../model/rule-order.ts'
import { ViewScope, type EntityView } from './entity-view.ts'
import { checkFieldConstraints } from './field-constraints.ts'
import { isEmpty, toRuleValue } from './values.ts'
import { findViews } from './find.ts'
import { checkRestrictedDeletes, runRoleRules } from './system-rules.ts'
import { byName } from '../persistence/entity-name.ts'

interface Pending {
  readonly entity: object
  readonly meta: EntityModel
  readonly created: boolean
  /** Properties whose value changed (set by the client or by a rule). */
  readonly changed: Set<string>
  /** Navigation properties whose related entities changed. */
  readonly navigations: Set<string>
}

/** Parents locked (and loaded fresh) in a transaction before their collection is read, per unit of work. */
const locks = new WeakMap<EntityManager, WeakSet<object>>()

function lockedIn(em: EntityManager): WeakSet<object> {
  let locked = locks.get(em)
  if (!locked) locks.set(em, (locked = new WeakSet()))
  return locked
}

/** Bounds the propagation between entities; a plugin's rules that never settle are a bug. */
const MAX_ROUNDS = 20

export async function applyRules(em: EntityManager, model: Model, uow: UnitOfWork, now = new Date()): Promise<void> {
  const scope = new ViewScope(model)
  const removed = new Set<object>([...uow.getRemoveStack()])
  const pending = collectChanges(model, uow, removed)
  if (pending.size === 0 && removed.size === 0) return
  const context: RuleContext = {
    before: undefined,
    now,
    today: now.toISOString().slice(0, 10),
    find: (entity, where) => findViews(em, scope, entity, where),
  }
  const touched = new Map<object, Pending>()
  for (const entity of removed) await propagate(em, model, pending, removed, entity, entityModel(model, entity), null)

  for (let round = 0; pending.size > 0; round++) {
    if (round >= MAX_ROUNDS) throw new Error(`business rules did not settle after ${MAX_ROUNDS} rounds: check the computed rules of ${[...pending.values()].map((p) => p.meta.name).join(', ')}`)
    const batch = [...pending.values()]
    pending.clear()
    await loadReferences(em, batch)
    for (const item of batch) {
      const before = touched.get(item.entity)
      // What the caller changed propagates once, with the entity's first round of rules.
      const givenChanges = before ? [] : [...item.changed]
      if (before) {
        for (const name of item.changed) before.changed.add(name)
      } else {
        touched.set(item.entity, item)
      }
      const changedNow = await runEntityRules(em, model, scope, removed, item, context)
      for (const name of new Set([...givenChanges, ...changedNow])) {
        await propagate(em, model, pending, removed, item.entity, item.meta, name)
      }
      if (item.created) await propagate(em, model, pending, removed, item.entity, item.meta, null)
    }
  }

  const failures: ErrorDetail[] = []
  for (const item of touched.values()) {
    if (removed.has(item.entity)) continue
    const view = scope.view(item.entity)
    failures.push(...checkFieldConstraints(item.meta, view))
    const before = item.created ? undefined : originalView(item)
    for (const [property, validate] of item.meta.rules.validations) {
      const verdict = await validate(view, { ...context, before })
      if (verdict !== true) {
        failures.push({ code: 'ValidationFailed', target: property, message: typeof verdict === 'string' ? verdict : `${property} is not valid` })
      }
    }
  }
  if (failures.length > 0) throw validationFailed(failures)
  await runRoleRules(em, model, touched.values(), removed)
  await checkRestrictedDeletes(em, model, removed)
}

/** New and changed entities of the unit of work, with what changed. */
function collectChanges(model: Model, uow: UnitOfWork, removed: Set<object>): Map<object, Pending> {
  const pending = new Map<object, Pending>()
  const candidates = new Set<object>([...uow.getPersistStack(), ...uow.getIdentityMap().values()])
  for (const entity of candidates) {
    if (removed.has(entity)) continue
    const meta = entityModel(model, entity)
    if (!meta) continue
    const original = helper(entity).__originalEntityData as Record<string, unknown> | undefined
    if (!original) {
      pending.set(entity, { entity, meta, created: true, changed: new Set(setProperties(meta, entity)), navigations: new Set() })
      continue
    }
    const changed = new Set<string>()
    for (const property of meta.properties.values()) {
      if (property.kind === 'collection' || (property.kind === 'scalar' && (!property.column || property.foreignKeyOf))) continue
      if (!sameValue(currentValue(entity, property.name), original[property.name])) changed.add(property.name)
    }
    if (changed.size > 0) pending.set(entity, { entity, meta, created: false, changed, navigations: new Set() })
  }
  return pending
}

/** Runs defaults, corrections and computed rules of one entity; returns what they changed. */
async function runEntityRules(
  em: EntityManager,
  model: Model,
  scope: ViewScope,
  removed: Set<object>,
  item: Pending,
  context: RuleContext,
): Promise<Set<string>> {
  const { entity, meta } = item
  const view = scope.view(entity)
  const record = entity as Record<string, unknown>
  const changed = new Set<string>()
  const set = (name: string, value: unknown) => {
    if (sameValue(record[name], value)) return
    record[name] = value
    changed.add(name)
    item.changed.add(name)
  }
  if (item.created) {
    for (const [name, makeDefault] of meta.rules.defaults) {
      if (isEmpty(view[name])) {
        const value = await makeDefault(view, context)
        if (!isEmpty(value)) set(name, value)
      }
    }
  }
  for (const [name, correct] of meta.rules.corrections) {
    if (item.changed.has(name) && !isEmpty(view[name])) set(name, correct(view[name], view))
  }
  for (const name of computedOrder(meta)) {
    const rule = meta.rules.computed.get(name)!
    const stale = item.created || rule.from.some((source) => {
      const [head] = source.split('.')
      return source.includes('.') ? item.navigations.has(head) || item.changed.has(head) : item.changed.has(head)
    })
    if (!stale) continue
    await loadForComputed(em, scope, removed, meta, entity, rule.from)
    const property = meta.properties.get(name)!
    const value = rule.value(view, context)
    if (property.kind !== 'scalar' || property.decl.virtual) continue
    set(name, value)
  }
  return changed
}

/**
 * Marks the entities whose computed rules read `property` of `entity` (null: the entity
 * itself appeared or disappeared): parents through a collection ('Lines.LineTotal') and
 * children through a reference ('Order.Title').
 */
async function propagate(
  em: EntityManager,
  model: Model,
  pending: Map<object, Pending>,
  removed: Set<object>,
  entity: object,
  meta: EntityModel,
  property: string | null,
): Promise<void> {
  for (const { dependent, navigation, head, tail } of dependenciesOn(model, meta)) {
    if (navigation.kind === 'collection' && (property === null || property === tail || property === navigation.inverse.name)) {
      for (const parent of parentsOf(entity, navigation)) await mark(em, pending, model, parent, head)
    }
    // A new entity has no stored children; new ones compute their own values.
    if (navigation.kind === 'reference' && property === tail && helper(entity).__originalEntityData) {
      const children = await em.find(byName(dependent.name), { [navigation.name]: entity } as never)
      for (const child of children) if (!removed.has(child)) await mark(em, pending, model, child, head)
    }
  }
}

/** A computed rule of `dependent` reading `tail` of another entity through `navigation` (`head`). */
interface Dependency {
  readonly dependent: EntityModel
  readonly navigation: ReferenceProperty | CollectionProperty
  readonly head: string
  readonly tail: string
}

const dependencyIndexes = new WeakMap<Model, Map<EntityModel, Dependency[]>>()

/** The computed rules that read an entity type through a navigation; indexed once per model. */
function dependenciesOn(model: Model, target: EntityModel): readonly Dependency[] {
  let index = dependencyIndexes.get(model)
  if (!index) {
    index = new Map()
    for (const dependent of model.entities.values()) {
      for (const rule of dependent.rules.computed.values()) {
        for (const source of rule.from) {
          const [head, tail] = source.split('.')
          const navigation = tail ? dependent.properties.get(head) : undefined
          if (!navigation || navigation.kind === 'scalar') continue
          const list = index.get(navigation.target) ?? []
          list.push({ dependent, navigation, head, tail })
          index.set(navigation.target, list)
        }
      }
    }
    dependencyIndexes.set(model, index)
  }
  return index.get(target) ?? []
}

/** The parent (and, when the reference changed, the previous parent) of a collection member. */
function parentsOf(entity: object, collection: CollectionProperty): object[] {
  const parents: object[] = []
  const current = Reference.unwrapReference((entity as Record<string, any>)[collection.inverse.name] ?? undefined)
  if (current) parents.push(current)
  const original = helper(entity).__originalEntityData as Record<string, unknown> | undefined
  const previousKey = original?.[collection.inverse.name]
  if (previousKey && (!current || helper(current).getPrimaryKey() !== previousKey)) {
    const previous = helper(entity).__em?.getReference(byName(collection.entity.name), previousKey as string)
    if (previous) parents.push(previous)
  }
  return parents
}

async function mark(em: EntityManager, pending: Map<object, Pending>, model: Model, entity: object, navigation: string): Promise<void> {
  let item = pending.get(entity)
  if (!item) {
    // A parent known only by its key (the order of a changed line) is loaded first, locked
    // when it will be recomputed inside a transaction (see loadForComputed).
    if (!helper(entity).__initialized) {
      const locking = em.isInTransaction()
      await em.findOne(byName(helper(entity).__meta.className), helper(entity).getPrimaryKey() as never, locking ? ({ lockMode: LockMode.PESSIMISTIC_WRITE } as never) : undefined)
      if (locking) lockedIn(em).add(entity)
    }
    const original = helper(entity).__originalEntityData
    item = { entity, meta: entityModel(model, entity), created: !original, changed: new Set(), navigations: new Set() }
    pending.set(entity, item)
  }
  item.navigations.add(navigation)
}

/** Loads every reference of the batch in one query per target type (defaults and validations read them). */
async function loadReferences(em: EntityManager, batch: readonly Pending[]): Promise<void> {
  const byType = new Map<string, object[]>()
  for (const item of batch) {
    for (const property of item.meta.properties.values()) {
      // New entities' defaults and validations may read any reference; on an update only a
      // reference that changed needs checking (computed rules load what their `from` names).
      if (property.kind !== 'reference' || (!item.created && !item.changed.has(property.name))) continue
      const target = Reference.unwrapReference((item.entity as Record<string, any>)[property.name] ?? undefined)
      if (target && !helper(target).__initialized) {
        const list = byType.get(property.target.name) ?? []
        list.push(target)
        byType.set(property.target.name, list)
      }
    }
  }
  const missing: ErrorDetail[] = []
  for (const [type, targets] of byType) {
    const keys = [...new Set(targets.map((t) => String(helper(t).getPrimaryKey())))]
    const found = new Set((await em.find(byName(type), { Guid: { $in: keys } } as never)).map((e) => String(helper(e).getPrimaryKey())))
    for (const key of keys) {
      if (!found.has(key)) missing.push({ code: 'ValidationFailed', target: referrerOf(batch, type, key), message: `No ${type} has the Guid ${key}.` })
    }
  }
  if (missing.length > 0) throw validationFailed(missing)
}

function referrerOf(batch: readonly Pending[], type: string, key: string): string {
  for (const item of batch) {
    for (const property of item.meta.properties.values()) {
      if (property.kind !== 'reference' || property.target.name !== type) continue
      const target = Reference.unwrapReference((item.entity as Record<string, any>)[property.name] ?? undefined)
      if (target && String(helper(target).getPrimaryKey()) === key) return property.name
    }
  }
  return type
}

/**
 * Makes the navigation data a computed rule reads available to its view. A collection is
 * read under a row lock on the parent, so two transactions changing members of the same
 * parent recompute it one after the other and neither loses the other's change.
 */
async function loadForComputed(
  em: EntityManager,
  scope: ViewScope,
  removed: Set<object>,
  meta: EntityModel,
  entity: object,
  from: readonly string[],
): Promise<void> {
  for (const source of from) {
    const [head, tail] = source.split('.')
    if (!tail) continue
    const navigation = meta.properties.get(head)
    if (!navigation || navigation.kind === 'scalar' || scope.collection(entity, head)) continue
    if (navigation.kind === 'reference') {
      await loadReference(em, entity, navigation)
      continue
    }
    const isNew = !helper(entity).__originalEntityData
    if (!isNew && em.isInTransaction() && !lockedIn(em).has(entity)) {
      lockedIn(em).add(entity)
      await em.findOne(byName(meta.name), helper(entity).getPrimaryKey() as never, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } as never)
    }
    const stored = isNew ? [] : await em.find(byName(navigation.target.name), { [navigation.inverse.name]: entity } as never)
    const members = new Set<object>(stored)
    // Members this unit of work adds: new entities, and loaded ones moved here from another parent.
    const unitOfWork = em.getUnitOfWork()
    for (const candidate of new Set([...unitOfWork.getPersistStack(), ...unitOfWork.getIdentityMap().values()])) {
      if (helper(candidate).__meta.className !== navigation.target.name) continue
      const parent = Reference.unwrapReference((candidate as Record<string, any>)[navigation.inverse.name] ?? undefined)
      if (parent === entity) members.add(candidate)
    }
    for (const member of [...members]) {
      const parent = Reference.unwrapReference((member as Record<string, any>)[navigation.inverse.name] ?? undefined)
      if (removed.has(member) || parent !== entity) members.delete(member)
    }
    scope.setCollection(entity, head, [...members])
  }
}

async function loadReference(em: EntityManager, entity: object, reference: ReferenceProperty): Promise<void> {
  const target = Reference.unwrapReference((entity as Record<string, any>)[reference.name] ?? undefined)
  if (target && !helper(target).__initialized) await em.findOne(byName(reference.target.name), helper(target).getPrimaryKey() as never)
}

function originalView(item: Pending): EntityView {
  const original = (helper(item.entity).__originalEntityData ?? {}) as Record<string, unknown>
  const view: EntityView = {}
  for (const property of item.meta.properties.values()) {
    if (property.kind === 'scalar') view[property.name] = toRuleValue(property, original[property.name])
    else if (property.kind === 'reference') view[property.name] = original[property.name] ? { Guid: original[property.name] } : null
  }
  return view
}

function setProperties(meta: EntityModel, entity: object): string[] {
  const record = entity as Record<string, unknown>
  return [...meta.properties.keys()].filter((name) => record[name] !== undefined && record[name] !== null)
}

function currentValue(entity: object, name: string): unknown {
  const value = (entity as Record<string, unknown>)[name]
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const target = Reference.unwrapReference(value as object)
    return helper(target).getPrimaryKey()
  }
  return value
}

/**
 * Whether a value is unchanged. Decimals arrive from PostgreSQL as strings ('12.30') and from
 * clients and rules as numbers (12.3): a number meets a string numerically. Two strings
 * compare as written, so a text property changing from '1.0' to '1' is a change.
 */
function sameValue(a: unknown, b: unknown): boolean {
  const normal = (v: unknown) => {
    if (v === undefined || v === null) return null
    if (v instanceof Date) return v.toISOString()
    if (typeof v === 'object') return String(helper(Reference.unwrapReference(v as object)).getPrimaryKey())
    return v
  }
  const x = normal(a)
  const y = normal(b)
  if (typeof x === 'number' || typeof y === 'number') return x !== null && y !== null && Number(x) === Number(y)
  return x === y || String(x) === String(y)
}

function entityModel(model: Model, entity: object): EntityModel {
  return model.entities.get(helper(entity).__meta.className)!
}
