// Runs a write plan on a session: a plan of read methods on a read-only unit (a change is
// refused), any other on a unit the session flushes, telling the session the plan (a
// workflow's session keeps it, to rebuild its state from plans).

import type { Session } from '../persistence/session.ts'
import { applyPlan, type PlanActor } from './apply-plan.ts'
import { isReadOnly, type PlanResult, type WritePlan } from './write-plan.ts'

/**
 * `within`: a read that must succeed for the write to stand (a reply that can fail on the
 * data), run in the write's transaction (Session.write); for a read-only plan, after it.
 */
export async function runPlan(session: Session, plan: WritePlan, actor: PlanActor, within?: (on: Session, result: PlanResult) => Promise<void>): Promise<PlanResult> {
  const apply = (unit: Parameters<Parameters<Session['write']>[0]>[0]) => applyPlan(unit, plan, actor)
  if (!isReadOnly(plan)) return session.write(apply, { plan, within })
  const result = await session.read(apply)
  await within?.(session, result)
  return result
}
