// Runs a write plan on a session: a plan of read methods on a read-only unit (a change is
// refused), any other on a unit the session flushes, telling the session the plan (a
// workflow's session keeps it, to rebuild its state from plans).

import type { Session, WriteOptions } from '../persistence/session.ts'
import { entityTag } from '../persistence/entity-tag.ts'
import type { UnitOfWork } from '../persistence/unit-of-work.ts'
import { applyPlan, type PlanActor } from './apply-plan.ts'
import { isReadOnly, type PlanResult, type WritePlan } from './write-plan.ts'

/**
 * `reply.within`: a read that must succeed for the write to stand (a reply that can fail on
 * the data), run in the write's transaction (Session.write); for a read-only plan, after it.
 * `reply.readBack`: a read the write's statement makes of the row it writes (Session.write).
 */
export async function runPlan(session: Session, plan: WritePlan, actor: PlanActor, reply: Pick<WriteOptions<PlanResult>, 'within' | 'readBack'> = {}): Promise<PlanResult> {
  let applied: UnitOfWork | undefined
  /** Read while the unit has its connection: the ETags are made after the write, without it. */
  let secret: string | undefined
  const apply = async (unit: UnitOfWork) => {
    applied = unit
    if (!isReadOnly(plan)) secret = await unit.entityTagSecret()
    return applyPlan(unit, plan, actor)
  }
  if (!isReadOnly(plan)) {
    const result = await session.write(apply, { plan, ...reply })
    return { ...result, etags: applied && secret !== undefined ? etagsAfter(applied, plan, result, secret) : [] }
  }
  const result = await session.read(apply)
  await reply.within?.(session, result)
  return result
}

/**
 * Per operation, the ETag its entity has once written (the created or changed one, a bound
 * method's binding entity): the new ETag a 204 answer carries. Undefined where there is none.
 */
function etagsAfter(unit: UnitOfWork, plan: WritePlan, result: PlanResult, secret: string): (string | undefined)[] {
  return plan.operations.map((operation, index) => {
    const key = operation.kind === 'call' ? operation.key : operation.kind === 'delete' ? undefined : result.results[index]
    const entity = unit.model.entities.get(operation.entity)
    if (typeof key !== 'string' || !entity) return undefined
    const entry = unit.get(entity, key)
    return entry && !entry.removed && entry.version !== undefined ? entityTag(entry.version, entry.xmin, secret) : undefined
  })
}
