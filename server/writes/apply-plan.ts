// Applies a write plan (write-plan.ts) to a unit of work: what the binder settled becomes
// entries of the unit, and what only the data decides is decided here: whether the entity to
// change exists, whether its ETag still matches If-Match, which members a delete's cascade
// reaches (and whether the caller may delete or change them). The unit's flush then runs the
// business rules and writes it all in one statement. The same plan applied to a unit with the
// same pins (clock, keys) changes the same rows the same way: workflows rely on it.

import type { Permission } from '../model/declarations.ts'
import type { EntityModel, Model } from '../model/model.ts'
import { MethodError, RequestError } from '../errors.ts'
import { entityTag, isTagOfVersion } from '../persistence/entity-tag.ts'
import type { Entry, RemovalCause, UnitOfWork } from '../persistence/unit-of-work.ts'
import { runMethod } from '../rules/run-method.ts'
import { WRITE_PLAN_FORMAT, type CallOperation, type CreateOperation, type PlanResult, type WriteOperation, type WritePlan } from './write-plan.ts'

/** Who applies the plan: what the data may still require of them, and who they are to a method. */
export interface PlanActor {
  /** Throws unless the caller holds `permission` on `entity` (checked as the data is found). */
  demand(entity: EntityModel, permission: Permission, by: string): void
  /** Throws unless the caller may apply the whole plan now: one planned earlier (a workflow's commit). */
  authorizePlan(model: Model, plan: WritePlan): void
  /** Throws unless the caller holds all the unit's changes grant (auth/grant-rules.ts): only the data says what a role gives. */
  authorizeGrants(unit: UnitOfWork): Promise<void>
  readonly user?: { readonly guid: string; readonly username: string }
}

export async function applyPlan(unit: UnitOfWork, plan: WritePlan, actor: PlanActor): Promise<PlanResult> {
  if (plan.format !== WRITE_PLAN_FORMAT) throw new Error(`a write plan of format ${String(plan.format)} cannot be applied by format ${WRITE_PLAN_FORMAT}`)
  const results: unknown[] = []
  for (const operation of plan.operations) results.push(await applyOperation(unit, operation, actor))
  await actor.authorizeGrants(unit)
  return { results }
}

async function applyOperation(unit: UnitOfWork, operation: WriteOperation, actor: PlanActor): Promise<unknown> {
  const entity = entityNamed(unit, operation.entity)
  switch (operation.kind) {
    case 'create':
      if (operation.parent) await requireEntity(unit, operation.parent)
      return create(unit, entity, operation).key
    case 'update': {
      if (operation.exists) await requireEntity(unit, operation.exists)
      // A PUT replaces every property; a PATCH reaches the parents its properties feed.
      const record = await loadForChange(unit, entity, operation.key, operation, operation.mode === 'put' ? undefined : Object.keys(operation.values))
      const { linkedTo } = operation
      if (linkedTo && String(record.values[linkedTo.property] ?? '').toLowerCase() !== linkedTo.key.toLowerCase()) {
        throw RequestError.notFound(`${entity.setName}(${operation.key}) is not linked to ${linkedTo.key} through ${linkedTo.property}.`)
      }
      Object.assign(record.values, operation.values)
      if (operation.mode === 'put') unit.recomputeAll(record)
      return record.key
    }
    case 'delete':
      await removeWithCascades(unit, await loadForChange(unit, entity, operation.key, operation, undefined), actor.demand)
      return undefined
    case 'call':
      // The entity a bound method changes is loaded as any changed entity is, its ETag checked.
      if (operation.key && operation.ifMatch) await loadForChange(unit, entity, operation.key, operation, [])
      await requireNamedEntities(unit, entity, operation)
      return runMethod(unit, { entity, method: operation.method, key: operation.key, params: operation.params, user: actor.user }, (entry) => {
        // The caller named the entity a method is bound to, not others the method removes.
        const named = entry.entity === entity && entry.key === operation.key?.toLowerCase()
        return removeWithCascades(unit, entry, coveredByExecute, named ? undefined : { kind: 'method', method: `${entity.name}.${operation.method}` })
      })
  }
}

/**
 * The entity and what it creates with it; its key first, then its nested ones' in the body's
 * order, each marked with where the body wrote it (`Lines/1`), as the binder's errors name it.
 */
function create(unit: UnitOfWork, entity: EntityModel, operation: CreateOperation, path = ''): Entry {
  const record = unit.create(entity, operation.key ?? unit.newGuid())
  if (path) unit.wroteFrom(record, path)
  Object.assign(record.values, operation.values)
  const members = new Map<string, number>()
  for (const { property: name, create: nested } of operation.nested) {
    const property = entity.properties.get(name)!
    if (property.kind === 'scalar') continue
    const index = members.get(name) ?? 0
    members.set(name, index + 1)
    const child = create(unit, property.target, nested, `${path ? `${path}/` : ''}${name}${property.kind === 'collection' ? `/${index}` : ''}`)
    if (property.kind === 'reference') record.values[property.name] = child.key
    else child.values[property.inverse.name] = record.key
  }
  for (const { property: name, keys } of operation.members) {
    const property = entity.properties.get(name)!
    if (property.kind !== 'collection') continue
    for (const key of keys) unit.reference(property.target, key).values[property.inverse.name] = record.key
  }
  return record
}

/** The parent a create goes through, or the entity a link names, must exist (it may be new in this unit). */
async function requireEntity(unit: UnitOfWork, wanted: { readonly entity: string; readonly key: string }): Promise<void> {
  const entity = entityNamed(unit, wanted.entity)
  const [entry] = await unit.load([{ entity, key: wanted.key }])
  if ((entry.state !== 'loaded' && entry.state !== 'new') || entry.removed) throw RequestError.notFound(`${entity.setName}(${wanted.key}) does not exist.`)
}

/**
 * The entities a method's p.reference and p.many parameters name must exist (they may be new
 * in this unit: created earlier in the change set or workflow), all loaded in one statement.
 * The binder could only check the Guids' form; a method must not meet a Guid of nothing.
 */
async function requireNamedEntities(unit: UnitOfWork, entity: EntityModel, operation: CallOperation): Promise<void> {
  const params = Object.entries(entity.methods.get(operation.method)?.params ?? {})
  const named: { readonly parameter: string; readonly target: EntityModel; readonly key: string }[] = []
  for (const [parameter, decl] of params) {
    const value = operation.params[parameter]
    if (decl.kind === 'scalar' || value === null || value === undefined) continue
    const target = entityNamed(unit, decl.target)
    for (const key of Array.isArray(value) ? value : [value]) named.push({ parameter, target, key: String(key) })
  }
  if (named.length === 0) return
  const entries = await unit.load(named.map(({ target, key }) => ({ entity: target, key })))
  const missing = named.findIndex((_, i) => (entries[i].state !== 'loaded' && entries[i].state !== 'new') || entries[i].removed)
  if (missing < 0) return
  const { parameter, target, key } = named[missing]
  throw MethodError.namesNoEntity(unit.publicName(parameter), target.name, key)
}

/** The entity to change, with what its change will recompute (the flush hook says what), its ETag checked. */
async function loadForChange(unit: UnitOfWork, entity: EntityModel, key: string, preconditions: Preconditions, changing: readonly string[] | undefined): Promise<Entry> {
  const record = await unit.loadForChange(entity, key, changing)
  if (!record) throw RequestError.notFound(`${entity.setName}(${key}) does not exist.`)
  const { ifMatch, ifNoneMatch } = preconditions
  if (!ifMatch && !ifNoneMatch) return record
  // Compared weakly, as RFC 9110 13.1.2 says for If-None-Match; our tags are weak anyway.
  // The version and the row's xmin: a tag of an entity deleted since, its key created again,
  // names another row and matches nothing (entity-tag.ts).
  const current = entityTag(record.version!, record.xmin, await unit.entityTagSecret())
  const matches = (tags: readonly string[]) => current !== undefined && (tags.includes(current) || tags.includes(current.slice(2)))
  if (ifMatch && !matches(ifMatch)) throw RequestError.preconditionFailed()
  // If-None-Match is "do not write over this state": a tag from before ETags carried the xmin
  // (W/"2") that may name it, its version the row's, is taken as naming it (isTagOfVersion).
  const namesThisState = (tags: readonly string[]) => matches(tags) || tags.some((tag) => isTagOfVersion(tag, record.version!))
  if (ifNoneMatch && (ifNoneMatch.includes('*') || namesThisState(ifNoneMatch))) throw RequestError.noneMatchFailed()
  return record
}

/** A write's conditions on the entity's ETag (If-Match, If-None-Match). */
interface Preconditions {
  readonly ifMatch?: readonly string[]
  readonly ifNoneMatch?: readonly string[]
}

/**
 * Removes an entity and, first, what its references' onDelete asks for: cascade removes
 * the members, setNull clears their reference (restrict is checked by the rules on flush).
 * Members are loaded so the rules see them go (a parent's totals, for instance). `demand`
 * checks the caller may delete or change each member reached; `cause` says how the caller
 * reached a record they did not name.
 */
async function removeWithCascades(unit: UnitOfWork, record: Entry, demand: PlanActor['demand'], cause?: RemovalCause): Promise<void> {
  for (const property of record.entity.properties.values()) {
    if (property.kind !== 'collection') continue
    const inverse = property.inverse
    // Restricting references are judged by the rules engine, which sees the whole flush.
    if (inverse.onDelete === 'restrict') continue
    for (const member of await unit.find(property.target, { [inverse.name]: record.key })) {
      // Which members a delete reaches only the data says, so these are checked as they are found.
      if (inverse.onDelete === 'cascade') {
        demand(property.target, 'delete', `Deleting ${property.target.setName} by cascade from ${record.entity.setName}`)
        await removeWithCascades(unit, member, demand, { kind: 'cascade', from: record, navigation: property.name })
      } else {
        demand(property.target, 'update', `Clearing ${property.target.setName}.${inverse.name} of a deleted ${record.entity.name}`)
        member.values[inverse.name] = null
      }
    }
  }
  unit.remove(record, cause)
}

/**
 * What a method's deletes reach needs no permission of its own, as its changes need none:
 * execute:<Method> covers what the method does, the method being the business's rule for it
 * (a CloseOrders responsibility closes orders without update on Order). What a method grants
 * through roles is still checked (PlanActor.authorizeGrants, on the whole unit).
 */
const coveredByExecute: PlanActor['demand'] = () => {}

function entityNamed(unit: UnitOfWork, name: string): EntityModel {
  const entity = unit.model.entities.get(name)
  // A stored plan of a workflow outlives a change of the plugins: the entity may be gone.
  if (!entity) throw RequestError.invalid(`The entity type ${name} no longer exists.`)
  return entity
}
