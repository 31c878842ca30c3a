// Runs a write plan on a session: a plan of read methods on a read-only unit (a change is
// refused), any other on a unit the session flushes, telling the session the plan (a
// workflow's session keeps it, to rebuild its state from plans).

import type { Session } from '../persistence/session.ts'
import { applyPlan, type PlanActor } from './apply-plan.ts'
import { isReadOnly, type PlanResult, type WritePlan } from './write-plan.ts'

export function runPlan(session: Session, plan: WritePlan, actor: PlanActor): Promise<PlanResult> {
  const apply = (unit: Parameters<Parameters<Session['write']>[0]>[0]) => applyPlan(unit, plan, actor)
  return isReadOnly(plan) ? session.read(apply) : session.write(apply, plan)
}
