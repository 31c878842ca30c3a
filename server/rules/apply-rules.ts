// The business rules of every write, run by every flush of a unit of work before anything
// is written, whatever started the write (HTTP, a method, the CLI, a workflow):
//
//   defaults (new entities, empty properties) → corrections (values set) → computed
//   (in dependency order, recomputed when what they read changed, across entities) →
//   field constraints and validations (all failures reported together).
//
// A failure throws ValidationFailed before anything is written, so nothing of the unit of
// work is stored.

import { MethodError, PluginError, validationFailed, type ErrorDetail, type ServiceError } from '../errors.ts'
import type { RuleContext } from '../model/declarations.ts'
import type { CollectionProperty, EntityModel } from '../model/model.ts'
import { computedOrder } from '../model/rule-order.ts'
import { sameValue, type Entry, type FlushHook, type LoadRequest, type UnitOfWork } from '../persistence/unit-of-work.ts'
import { referenceKey, ViewScope, type EntityView } from './entity-view.ts'
import { checkFieldConstraints } from './field-constraints.ts'
import { isEmpty, toRuleValue } from './values.ts'
import { findViews } from './find.ts'
import { awaitPlugin, callPlugin, pluginValue } from './plugin-call.ts'
import { changesRoleTree, checkRestrictedDeletes, runRoleRules } from './system-rules.ts'
import { dependenciesOn, parentsReachedBy, readsMembers } from './dependencies.ts'
import { movedSum, sumsMovedInSql } from './moved-sums.ts'

interface Pending {
  readonly entry: Entry
  readonly created: boolean
  /** Every computed property is stale, as for a new entity (a PUT: UnitOfWork.recomputeAll). */
  readonly replaced: boolean
  /** Properties whose value changed (set by the client or by a rule). */
  readonly changed: Set<string>
  /** Navigation properties whose related entities changed. */
  readonly navigations: Set<string>
}

/**
 * The rules as a unit of work's flush hook: they run before every write, and they say which
 * parents a change will make them recompute, so the unit loads those with the changed row.
 */
export const businessRules: FlushHook = {
  beforeWrite: (unit) => applyRules(unit),
  prefetch: (model, entity, changing) => parentsReachedBy(model, entity, changing),
  needsTransaction: (unit) => changesRoleTree(unit),
}

/** Bounds the propagation between entities; a plugin's rules that never settle are a bug. */
const MAX_ROUNDS = 20

export async function applyRules(unit: UnitOfWork): Promise<void> {
  const scope = new ViewScope(unit)
  const removed = new Set([...unit.pending()].filter((entry) => entry.removed && entry.state === 'loaded'))
  const pending = collectChanges(unit)
  if (pending.size === 0 && removed.size === 0) return
  const context: RuleContext = {
    before: undefined,
    now: unit.now,
    today: unit.now.toISOString().slice(0, 10),
    find: (entity, where) => findViews(unit, scope, entity, where),
  }
  const touched = new Map<Entry, Pending>()
  for (const entry of removed) await propagate(unit, pending, entry, null)

  for (let round = 0; pending.size > 0; round++) {
    if (round >= MAX_ROUNDS) throw new Error(`business rules did not settle after ${MAX_ROUNDS} rounds: check the computed rules of ${[...pending.values()].map((p) => p.entry.entity.name).join(', ')}`)
    const batch = [...pending.values()]
    pending.clear()
    await loadReferences(unit, batch)
    for (const item of batch) {
      const before = touched.get(item.entry)
      // What the caller changed propagates once, with the entity's first round of rules.
      const givenChanges = before ? [] : [...item.changed]
      if (before) {
        for (const name of item.changed) before.changed.add(name)
      } else {
        touched.set(item.entry, item)
      }
      const changedNow = await runEntityRules(unit, scope, item, context)
      for (const name of new Set([...givenChanges, ...changedNow])) await propagate(unit, pending, item.entry, name)
      if (item.created) await propagate(unit, pending, item.entry, null)
    }
  }

  await checkReferencesRulesSet(unit, touched.values())
  const failures: ErrorDetail[] = []
  for (const item of touched.values()) {
    if (item.entry.removed) continue
    const view = scope.view(item.entry)
    const constraintFailures = scope.unobserved(() => checkFieldConstraints(item.entry.entity, view, (name) => unit.publicName(name)))
    for (const failure of constraintFailures) failures.push({ ...failure, target: unit.targetOf(item.entry, failure.target!) })
    const before = item.created ? undefined : originalView(item.entry)
    for (const [property, validate] of item.entry.entity.rules.validations) {
      const what = `validation ${item.entry.entity.name}.${property}`
      const verdict = await awaitPlugin(what, () => validate(view, { ...context, before }), unit.pluginLimits)
      // A block body that forgot its return: the client is not to blame for "X is not valid".
      if (verdict === undefined) throw PluginError.fault(what, 'returned undefined; a validation returns true or a message')
      if (verdict !== true) {
        failures.push({ code: 'ValidationFailed', target: unit.targetOf(item.entry, property), message: typeof verdict === 'string' ? verdict : `${unit.publicName(property)} is not valid` })
      }
    }
  }
  if (failures.length > 0) throw validationFailed(failures)
  await runRoleRules(unit, touched.values(), removed)
  await checkRestrictedDeletes(unit, removed)
}

/** New and changed entities of the unit of work, with what changed. */
function collectChanges(unit: UnitOfWork): Map<Entry, Pending> {
  const pending = new Map<Entry, Pending>()
  for (const entry of unit.pending()) {
    if (entry.removed || entry.state === 'stub') continue
    const changed = new Set(unit.changes(entry))
    const replaced = unit.recomputesAll(entry)
    if (entry.state === 'new' || changed.size > 0 || replaced) pending.set(entry, { entry, created: entry.state === 'new', replaced, changed, navigations: new Set() })
  }
  return pending
}

/** Runs defaults, corrections and computed rules of one entity; returns what they changed. */
async function runEntityRules(unit: UnitOfWork, scope: ViewScope, item: Pending, context: RuleContext): Promise<Set<string>> {
  const { entry } = item
  const meta = entry.entity
  const view = scope.view(entry)
  const changed = new Set<string>()
  /** Sets what the rule `what` gave `name`, checked against the property's type. */
  const set = (name: string, given: unknown, what: string) => {
    const property = meta.properties.get(name)
    const value =
      property?.kind === 'scalar' ? pluginValue(what, `${meta.name}.${name}`, property.decl, given)
      : property?.kind === 'reference' ? referenceKey(what, property.target, given)
      : given
    if (sameValue(entry.values[name], value)) return
    entry.values[name] = value
    if (property?.kind === 'reference') unit.setReferenceBy(entry, name, { what })
    changed.add(name)
    item.changed.add(name)
  }
  if (item.created) {
    for (const [name, makeDefault] of meta.rules.defaults) {
      if (isEmpty(view[name])) {
        const what = `default ${meta.name}.${name}`
        const value = await awaitPlugin(what, () => makeDefault(view, context), unit.pluginLimits)
        if (!isEmpty(value)) set(name, value, what)
      }
    }
  }
  for (const [name, correct] of meta.rules.corrections) {
    if (!item.changed.has(name) || isEmpty(view[name])) continue
    const what = `correction ${meta.name}.${name}`
    const corrected = callPlugin(what, () => correct(view[name], view))
    // Forgotten returns clear the value silently (then "X is required" blames the client); null clears it on purpose.
    if (corrected === undefined) throw PluginError.fault(what, 'returned undefined; a correction returns the corrected value')
    set(name, corrected, what)
  }
  for (const name of computedOrder(meta)) {
    const rule = meta.rules.computed.get(name)!
    const property = meta.properties.get(name)!
    // A virtual value is computed when it is read (finish-entities.ts), never for a write.
    if (property.kind !== 'scalar' || property.decl.virtual) continue
    // A computed value is the rule's alone: one a method or a client set is computed again.
    const stale = item.created || item.replaced || item.changed.has(name) || rule.from.some((source) => {
      const [head] = source.split('.')
      return item.navigations.has(head) || item.changed.has(head)
    })
    if (!stale) continue
    const what = `computed ${meta.name}.${name}`
    const moved = rule.sumOf && !item.replaced ? movedSum(unit, entry, name, rule.sumOf) : undefined
    if (moved !== undefined) {
      // Moved in SQL by the change when no plugin code reads it; otherwise written over the
      // version read even if the sum stays, as a parent computed from its members is (loadForComputed).
      if (sumsMovedInSql(meta).has(name)) unit.moveSum(entry, name)
      else unit.touch(entry)
      set(name, moved, what)
      continue
    }
    await loadForComputed(unit, scope, entry, rule.from)
    set(name, callPlugin(what, () => rule.value(view, context)), what)
  }
  return changed
}

/**
 * Marks the entities whose computed rules read `property` of `entry` (null: the entity
 * itself appeared or disappeared): parents through a collection ('Lines.LineTotal') and
 * children through a reference ('Order.Title').
 */
async function propagate(unit: UnitOfWork, pending: Map<Entry, Pending>, entry: Entry, property: string | null): Promise<void> {
  for (const { dependent, navigation, head, tail } of dependenciesOn(unit.model, entry.entity)) {
    if (navigation.kind === 'collection' && (property === null || property === tail || property === navigation.inverse.name)) {
      for (const key of parentsOf(entry, navigation)) await mark(unit, pending, unit.reference(navigation.entity, key), head)
    }
    // A new entity has no stored children; new ones compute their own values. Those stored are
    // found under a lock of the entity's row, so none written meanwhile is missed.
    if (navigation.kind === 'reference' && property === tail && entry.state === 'loaded') {
      await unit.lockForDependents(entry)
      for (const child of await unit.find(dependent, { [navigation.name]: entry.key })) await mark(unit, pending, child, head)
    }
  }
}

/** The keys of a member's parent and, when the reference changed, of its previous parent. */
function parentsOf(entry: Entry, collection: CollectionProperty): string[] {
  const current = entry.values[collection.inverse.name] as string | null | undefined
  const previous = entry.original?.[collection.inverse.name] as string | null | undefined
  return [...new Set([current, previous])].filter((key): key is string => typeof key === 'string')
}

/**
 * Queues an entity for recomputation because `navigation` changed. One known only by its key
 * (the order of a changed line) is loaded first, with the collection its rules will read, in
 * one statement.
 */
async function mark(unit: UnitOfWork, pending: Map<Entry, Pending>, entry: Entry, navigation: string): Promise<void> {
  if (entry.removed) return
  let item = pending.get(entry)
  if (!item) {
    if (entry.state === 'stub') {
      const collection = entry.entity.properties.get(navigation)
      const members = collection?.kind === 'collection' && readsMembers(unit.model, collection) ? [collection] : []
      await unit.load([{ entity: entry.entity, key: entry.key, members }])
      if (entry.state === 'stub') return
    }
    item = { entry, created: entry.state === 'new', replaced: false, changed: new Set(), navigations: new Set() }
    pending.set(entry, item)
  }
  item.navigations.add(navigation)
}

/**
 * Loads every reference of the batch in one statement (defaults and validations read them),
 * with the members of those that are parents the new or moved entity will recompute (a line
 * added to an order brings the order's lines).
 */
async function loadReferences(unit: UnitOfWork, batch: readonly Pending[]): Promise<void> {
  const requests: (LoadRequest & MissingReferenceCheck)[] = []
  for (const item of batch) {
    const parents = parentsReachedBy(unit.model, item.entry.entity, item.created ? undefined : item.changed)
    for (const property of item.entry.entity.properties.values()) {
      // New entities' defaults and validations may read any reference; on an update only a
      // reference that changed needs checking (computed rules load what their `from` names).
      if (property.kind !== 'reference' || (!item.created && !item.changed.has(property.name))) continue
      const key = item.entry.values[property.name]
      if (typeof key !== 'string') continue
      const members = parents.filter((parent) => parent.reference === property && parent.withMembers).map((parent) => parent.members)
      if (unit.reference(property.target, key).state === 'stub' || members.length > 0) {
        requests.push({ entity: property.target, key, members, referrer: property.name, from: item.entry })
      }
    }
  }
  if (requests.length === 0) return
  await unit.load(requests)
  refuseMissing(unit, requests)
}

/**
 * A reference a rule set (a default's Guid) after the references of its round were loaded is
 * checked here, as loadReferences checks the others, in one statement and only for targets
 * the unit has not met; left to the database's foreign key it came back as a client's 400.
 */
async function checkReferencesRulesSet(unit: UnitOfWork, items: Iterable<Pending>): Promise<void> {
  const requests: MissingReferenceCheck[] = []
  for (const { entry } of items) {
    if (entry.removed) continue
    for (const property of entry.entity.properties.values()) {
      if (property.kind !== 'reference' || !unit.referenceSetter(entry, property.name)) continue
      const key = entry.values[property.name] as string
      if (unit.reference(property.target, key).state === 'stub') requests.push({ entity: property.target, key, referrer: property.name, from: entry })
    }
  }
  if (requests.length === 0) return
  await unit.load(requests)
  refuseMissing(unit, requests)
}

/** A reference to check: `referrer` of `from` holds the Guid `key` of an `entity`. */
interface MissingReferenceCheck {
  readonly entity: EntityModel
  readonly key: string
  readonly referrer: string
  readonly from: Entry
}

/** Refuses the write if a checked reference names no entity, blaming whoever gave the Guid. */
function refuseMissing(unit: UnitOfWork, checked: readonly MissingReferenceCheck[]): void {
  const missing = checked.filter((request) => ['stub', 'gone'].includes(unit.get(request.entity, request.key)?.state ?? 'stub'))
  const seen = new Set<string>()
  const failures: ErrorDetail[] = []
  let givenToMethod: ServiceError | undefined
  let pluginFault: ServiceError | undefined
  for (const { entity, key, referrer, from } of missing) {
    // A Guid plugin code made up is its bug (500), not the client's; one the client gave a
    // method is the client's, named by the parameter the client gave it in.
    const setter = unit.referenceSetter(from, referrer)
    if (setter?.parameter !== undefined) givenToMethod ??= MethodError.namesNoEntity(unit.publicName(setter.parameter), entity.name, key)
    else if (setter) pluginFault ??= PluginError.fault(setter.what, `set ${from.entity.name}.${referrer} to ${key}, the Guid of no ${entity.name}`)
    if (setter || seen.has(`${entity.name}(${key})`)) continue
    seen.add(`${entity.name}(${key})`)
    failures.push({ code: 'ValidationFailed', target: unit.publicName(referrer), message: `No ${entity.name} has the Guid ${key}.` })
  }
  if (failures.length > 0) throw validationFailed(failures)
  if (givenToMethod) throw givenToMethod
  if (pluginFault) throw pluginFault
}

/**
 * Makes the navigation data a computed rule reads available to its view. A parent recomputed
 * from its members is written even if its value stays, so two units changing members of one
 * parent meet on its row version and the later one runs again (persistence/unit-of-work.ts).
 */
async function loadForComputed(unit: UnitOfWork, scope: ViewScope, entry: Entry, from: readonly string[]): Promise<void> {
  for (const source of from) {
    const [head] = source.split('.')
    const navigation = entry.entity.properties.get(head)
    if (!navigation || navigation.kind === 'scalar' || scope.collection(entry, head)) continue
    if (navigation.kind === 'reference') {
      const key = entry.values[head]
      if (typeof key !== 'string') continue
      const target = unit.reference(navigation.target, key)
      if (target.state === 'stub') await unit.load([{ entity: navigation.target, key }])
      // The value rests on the target's stored properties: the write holds them as read.
      if (source !== head) unit.readFrom(target, source.slice(head.length + 1))
      continue
    }
    unit.touch(entry)
    scope.setCollection(entry, head, await unit.members(entry, navigation))
  }
}

function originalView(entry: Entry): EntityView {
  const original = entry.original ?? {}
  const view: EntityView = {}
  for (const property of entry.entity.properties.values()) {
    if (property.kind === 'scalar') view[property.name] = toRuleValue(property, original[property.foreignKeyOf?.name ?? property.name])
    else if (property.kind === 'reference') view[property.name] = original[property.name] ? { Guid: original[property.name] } : null
  }
  return view
}
