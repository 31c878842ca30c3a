// Rebuilds a workflow's pending state on its transaction from the write plans its requests
// stored: one unit of work applies them in order, each request's plans pinned to the clock
// and Guids of its first run and staged (the rules run, the result is settled in memory), so
// each writes what it wrote then; one statement then writes the net result. A request's cost
// grows with the changes the workflow holds, not with its number of requests squared, and
// nothing here goes through HTTP: no reply is read again.
//
// The rows a request changes must still carry the versions it found on its first run, or
// someone changed them outside the workflow: 409 naming them. A request that fails now
// (validation, a row gone) fails the rebuild, named by its index.

import { ServiceError, type ErrorDetail } from '../errors.ts'
import type { Model } from '../model/model.ts'
import { translateDatabaseError } from '../persistence/database-errors.ts'
import { newGuid } from '../persistence/guid.ts'
import { openUnit } from '../persistence/session.ts'
import type { Sql } from '../persistence/sql.ts'
import type { LoadRequest } from '../persistence/unit-of-work.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { applyPlan, type PlanActor } from '../writes/apply-plan.ts'
import type { WritePlan } from '../writes/write-plan.ts'
import { WorkflowError } from './workflow-errors.ts'
import type { StoredRequest, Touch } from './workflow-store.ts'

export async function rebuildWorkflow(tenant: TenantDatabase, sql: Sql, requests: readonly StoredRequest[], actor: PlanActor): Promise<void> {
  if (requests.length === 0) return
  const touched = new Map<string, Touch>()
  const unit = openUnit(tenant, sql, {
    onWrite: (rows) => {
      for (const row of rows) if (!touched.has(`${row[0]}(${row[1]})`)) touched.set(`${row[0]}(${row[1]})`, row)
    },
  })
  // The rows the plans change by key, in one statement rather than one per request.
  await unit.load(rowsNamedBy(tenant.model, requests.flatMap((request) => request.plans)))
  for (const request of requests) {
    touched.clear()
    const guids = [...request.guids]
    unit.pin({ now: request.at, newGuid: () => guids.shift() ?? newGuid(request.at.getTime()) })
    try {
      for (const plan of request.plans) {
        await applyPlan(unit, plan, actor)
        await unit.stage()
      }
    } catch (error) {
      throw noLongerApplies(request, error)
    }
    const changed = changesOutside(tenant.model, request.touched, touched)
    if (changed.length > 0) throw WorkflowError.changedOutside(request, changed)
  }
  try {
    await unit.flush()
  } catch (error) {
    throw noLongerApplies(requests.at(-1)!, error)
  }
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
    } else if (now[2] !== version) {
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
