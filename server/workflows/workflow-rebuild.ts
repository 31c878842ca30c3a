// A workflow's pending state, put back on its transaction, two ways, neither through HTTP (no
// reply is read again):
//
//   rebuildWorkflow  (the commit) applies the stored write plans again: one unit of work, each
//                    request's plans pinned to the clock and Guids of its first run and staged
//                    (the rules run, the result is settled in memory), so each writes what it
//                    wrote then and is validated again on today's data, once the rows they
//                    changed are known to be unchanged outside; one statement then writes the
//                    net result.
//   restoreWorkflow  (every other request) puts back the rows the plans wrote, as they wrote
//                    them: their net result in one statement, no rule run again, after one
//                    statement checking that the rows that existed still have the versions the
//                    workflow found. A request costs its own work plus work proportional to
//                    the rows the workflow holds.
//
// The commit writes with the access its caller holds now: each plan is authorized again
// (authorize.ts authorizePlan), as a delete's cascades are.
//
// Either way, the rows a request changes must still carry the versions it found on its first
// run, or someone changed them outside the workflow: 409 naming them. A request that fails now
// (validation, a row gone) fails the rebuild, named by its index.

import { RequestError, ServiceError, type ErrorDetail } from '../errors.ts'
import type { EntityModel, Model } from '../model/model.ts'
import { KEY, VERSION_COLUMN } from '../model/model.ts'
import { metAnotherWrite, translateDatabaseError } from '../persistence/database-errors.ts'
import { newGuid } from '../persistence/guid.ts'
import { openUnit } from '../persistence/session.ts'
import { quoteIdentifier as quote, type Sql } from '../persistence/sql.ts'
import { SqlParameters } from '../persistence/sql-parameters.ts'
import { entityTag, isTagOfVersion } from '../persistence/entity-tag.ts'
import type { FlushedRow, LoadRequest, RowToWrite, UnitOfWork } from '../persistence/unit-of-work.ts'
import { committedVersion, nextVersion } from '../persistence/write-statement.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { applyPlan, type PlanActor } from '../writes/apply-plan.ts'
import type { WritePlan } from '../writes/write-plan.ts'
import { WorkflowError, type RequestRef } from './workflow-errors.ts'
import type { StoredRequest, Touch } from './workflow-store.ts'

export async function rebuildWorkflow(tenant: TenantDatabase, sql: Sql, requests: readonly StoredRequest[], actor: PlanActor): Promise<void> {
  if (requests.length === 0) return
  // Rows changed outside first: a stored request that now fails its rules on them fails
  // because its data no longer stands (409), not because of what the client sent (400).
  const existed = [...heldRows(tenant.model, requests).values()].filter((row) => row.existed)
  await requireUnchanged(tenant.model, sql, existed)
  const touched = new Map<string, Touch>()
  const unit = openUnit(tenant, sql, {
    onWrite: (rows) => {
      for (const row of rows) if (!touched.has(`${row[0]}(${row[1]})`)) touched.set(`${row[0]}(${row[1]})`, row)
    },
  })
  // The rows the plans change by key, in one statement rather than one per request.
  await unit.load(rowsNamedBy(tenant.model, requests.flatMap((request) => request.plans)))
  /** The rows the requests before the current one wrote, by `Entity(key)`: pending ones. */
  const pending = new Set<string>()
  for (const request of requests) {
    touched.clear()
    const guids = [...request.guids]
    unit.pin({ now: request.at, newGuid: () => guids.shift() ?? newGuid(request.at.getTime()) })
    try {
      for (const plan of request.plans) {
        actor.authorizePlan(tenant.model, plan)
        await applyPlan(unit, withTagsOfNow(unit, plan, pending, await unit.entityTagSecret()), actor)
        await unit.stage()
      }
    } catch (error) {
      throw noLongerApplies(request, error)
    }
    for (const row of request.rows) pending.add(`${row.entity}(${row.key})`)
    const changed = changesOutside(tenant.model, request.touched, touched)
    if (changed.length > 0) throw WorkflowError.changedOutside(request, changed)
  }
  await sql('savepoint workflow_flush')
  try {
    await unit.flush()
  } catch (error) {
    if (metAnotherWrite(error)) {
      // Another write of these rows committed while this one waited for them: name its rows,
      // as the commit sent again would, rather than only asking for it to be sent again.
      await sql('rollback to savepoint workflow_flush')
      await requireUnchanged(tenant.model, sql, existed)
    }
    throw noLongerApplies(requests.at(-1)!, error)
  }
}

/**
 * The plan with its If-Match tags as this version reads them. A version of entityctl before
 * pending versions (write-statement.ts nextVersion) answered a row the workflow had written
 * with an ETag above zero (W/"2"), and a client sent it back as If-Match; the row it named is
 * the pending one, W/"-2" now. A version before ETags carried the row's xmin (entity-tag.ts)
 * stored W/"2" for a row the workflow found: it matched that row when the request ran, and
 * the row still has that version (requireUnchanged), so it stands for the row's ETag now.
 * Neither tag gets past a request of this version (412), so this changes nothing of a plan
 * this version stored. If-None-Match is left as it is: a tag that did not match then is of
 * another version than the row's, which it still has, so it matches neither now (apply-plan.ts
 * reads such a tag as this does, isTagOfVersion).
 */
function withTagsOfNow(unit: UnitOfWork, plan: WritePlan, pending: ReadonlySet<string>, secret: string): WritePlan {
  const operations = plan.operations.map((operation) => {
    if (operation.kind === 'create' || !operation.ifMatch || !operation.key) return operation
    if (pending.has(`${operation.entity}(${operation.key})`)) return { ...operation, ifMatch: operation.ifMatch.map((tag) => tag.replace(/^(W\/)?"(\d+)"$/, '$1"-$2"')) }
    const entity = unit.model.entities.get(operation.entity)
    const found = entity && unit.get(entity, operation.key)
    const version = found?.state === 'loaded' ? found.version : undefined
    if (version === undefined) return operation
    const now = entityTag(version, found!.xmin, secret)
    const ifMatch = operation.ifMatch.map((tag) => (now !== undefined && isTagOfVersion(tag, version) ? now : tag))
    return { ...operation, ifMatch }
  })
  return { ...plan, operations }
}

/** A row as the workflow's requests left it, and the request that first touched it. */
interface HeldRow {
  readonly entity: EntityModel
  readonly key: string
  /** It was stored before the workflow: updated or deleted over `expected`, else inserted. */
  readonly existed: boolean
  readonly expected?: number
  /** The xmin it had beside `expected`, when the request recorded it (FlushedRow). */
  readonly expectedXmin?: string
  version: number
  readonly values: Record<string, unknown>
  gone: boolean
  readonly first: StoredRequest
}

export async function restoreWorkflow(tenant: TenantDatabase, sql: Sql, requests: readonly StoredRequest[]): Promise<void> {
  const held = heldRows(tenant.model, requests)
  await requireUnchanged(tenant.model, sql, [...held.values()].filter((row) => row.existed))
  const rows = [...held.values()].map(
    (row): RowToWrite =>
      !row.existed
        ? { entity: row.entity, key: row.key, kind: 'insert', version: row.version, values: row.values }
        : row.gone
          ? { entity: row.entity, key: row.key, kind: 'delete', expected: row.expected }
          : { entity: row.entity, key: row.key, kind: 'update', expected: row.expected, version: row.version, values: row.values },
  )
  try {
    await openUnit(tenant, sql).writeRows(rows)
  } catch (error) {
    throw noLongerApplies(requests.at(-1)!, error)
  }
}

/** The rows the requests wrote, by `Entity(key)`, as the last of them left each. */
function heldRows(model: Model, requests: readonly StoredRequest[]): Map<string, HeldRow> {
  const held = new Map<string, HeldRow>()
  for (const request of requests) {
    for (const row of request.rows) {
      const entity = model.entities.get(row.entity)
      if (!entity) throw noLongerApplies(request, RequestError.invalid(`The entity type ${row.entity} no longer exists.`))
      const id = `${row.entity}(${row.key})`
      const known = held.get(id)
      if (row.kind === 'insert' || !known) {
        const existed = row.kind !== 'insert'
        const version = nextVersion(existed ? row.expected : undefined, true)
        held.set(id, { entity, key: row.key, existed, expected: row.expected, expectedXmin: row.expectedXmin, version, values: { ...row.values }, gone: row.kind === 'delete', first: request })
        continue
      }
      if (row.kind === 'delete') {
        if (known.existed) known.gone = true
        else held.delete(id)
        continue
      }
      Object.assign(known.values, row.values)
      known.version = nextVersion(known.version, true)
    }
  }
  return held
}

/**
 * A key the workflow deleted is not created again in it: the commit applies every plan to one
 * unit of work, where the entity deleted and the one created are one entry, and the new one
 * would be lost. 409 naming the key and the request that deleted it, before it is stored.
 */
export function refuseRecreated(model: Model, requests: readonly StoredRequest[], current: RequestRef & { readonly rows: readonly FlushedRow[] }): void {
  const deletedBy = new Map<string, RequestRef>()
  for (const request of [...requests, current]) {
    for (const row of request.rows) {
      const id = `${row.entity}(${row.key})`
      if (row.kind === 'delete' && !deletedBy.has(id)) deletedBy.set(id, request)
      const deleter = deletedBy.get(id)
      if (row.kind !== 'insert' || !deleter || request !== current) continue
      throw WorkflowError.recreated(`${model.entities.get(row.entity)?.setName ?? row.entity}(${row.key})`, deleter)
    }
  }
}

/**
 * The rows that existed before the workflow still have the versions it found, and the xmin
 * (a row deleted and created again under its key outside is at the version again): one
 * statement, or 409 naming those that do not.
 */
async function requireUnchanged(model: Model, sql: Sql, rows: readonly HeldRow[]): Promise<void> {
  if (rows.length === 0) return
  const byEntity = new Map<EntityModel, string[]>()
  for (const row of rows) byEntity.set(row.entity, [...(byEntity.get(row.entity) ?? []), row.key])
  const params = new SqlParameters()
  const parts = [...byEntity].map(
    ([entity, keys]) => `select ${params.add(entity.name, 'text')} as "entity", t.${quote(KEY)}::text as "key", t.${quote(VERSION_COLUMN)} as "version", t.xmin::text as "xmin"
              from ${quote(entity.table)} t where t.${quote(KEY)} = any(${params.add(keys, 'uuid[]')})`,
  )
  const found = new Map((await sql<{ entity: string; key: string; version: number; xmin: string }>(parts.join(' union all '), params.values)).map((r) => [`${r.entity}(${r.key})`, r]))
  const changed = rows
    .map((row) => ({ row, stored: found.get(`${row.entity.name}(${row.key})`) }))
    .filter(({ row, stored }) => stored === undefined || stored.version !== row.expected || (row.expectedXmin !== undefined && stored.xmin !== row.expectedXmin))
  if (changed.length === 0) return
  const first = changed.reduce((a, b) => (b.row.first.index < a.row.first.index ? b : a)).row.first
  const details = changed
    .filter(({ row }) => row.first === first)
    .map(({ row, stored }): ErrorDetail => {
      const label = `${model.entities.get(row.entity.name)?.setName ?? row.entity.name}(${row.key})`
      const message =
        stored === undefined
          ? 'it was deleted.'
          : stored.version !== row.expected
            ? `row version ${row.expected} when the workflow changed it, ${stored.version} now.`
            : `it was deleted and created again, or written again, at row version ${row.expected}.`
      return { code: 'Conflict', target: label, message: `${label} was changed outside the workflow: ${message}` }
    })
  throw WorkflowError.changedOutside(first, details)
}

function noLongerApplies(request: StoredRequest, error: unknown): unknown {
  const known = error instanceof ServiceError ? error : translateDatabaseError(error)
  return known ? WorkflowError.noLongerApplies(request, known) : error
}

/** The entities the plans name by key (updates, deletes, bound method calls). */
function rowsNamedBy(model: Model, plans: readonly WritePlan[]): LoadRequest[] {
  const requests: LoadRequest[] = []
  for (const plan of plans) {
    for (const operation of plan.operations) {
      const entity = model.entities.get(operation.entity)
      if (entity && operation.kind !== 'create' && operation.key) requests.push({ entity, key: operation.key })
    }
  }
  return requests
}

/**
 * Rows whose version differs from the one the request found on its first run, or that it
 * changes now but did not then (a row added outside that a cascade now reaches):
 *   OrderLines(…): version 1 then, 2 now
 */
function changesOutside(model: Model, recorded: readonly Touch[], rebuilt: ReadonlyMap<string, Touch>): ErrorDetail[] {
  const label = (entity: string, key: string) => `${model.entities.get(entity)?.setName ?? entity}(${key})`
  const details: ErrorDetail[] = []
  const seen = new Set<string>()
  for (const [entity, key, version] of recorded) {
    const id = `${entity}(${key})`
    seen.add(id)
    const now = rebuilt.get(id)
    if (!now) {
      details.push({ code: 'Conflict', target: label(entity, key), message: `${label(entity, key)} was changed outside the workflow: the request no longer reaches it.` })
    } else if (committedVersion(now[2]) !== committedVersion(version)) {
      // Compared by size: a workflow left open by a version of entityctl before pending
      // versions (write-statement.ts nextVersion) recorded the rows it had written above zero,
      // and a row is pending in the rebuild exactly when it was on the first run, whose earlier
      // requests the rebuild applied again, so the sign tells nothing of a change outside.
      details.push({
        code: 'Conflict',
        target: label(entity, key),
        message: `${label(entity, key)} was changed outside the workflow: row version ${version} when the workflow changed it, ${now[2]} now.`,
      })
    }
  }
  for (const [id, [entity, key]] of rebuilt) {
    if (seen.has(id)) continue
    details.push({ code: 'Conflict', target: label(entity, key), message: `${label(entity, key)} appeared outside the workflow and would now be changed by it too.` })
  }
  return details
}
