// The caller as applying a write plan sees them: the permissions only the data can demand
// (a delete's cascades), checked against their access through authorize.ts, the one stage
// that serves reads and writes, and who they are to a method (context.user).

import type { AccessContext } from '../auth/access-context.ts'
import { checkGrants } from '../auth/grant-rules.ts'
import { authorizePlan, demand } from '../odata/semantic/authorize.ts'
import type { PlanActor } from './apply-plan.ts'

export function planActor(access: AccessContext | undefined): PlanActor {
  return {
    demand: (entity, permission, by) => demand(access, { entity, permission, by }),
    authorizePlan: (model, plan) => authorizePlan(access, model, plan),
    authorizeGrants: async (unit) => {
      if (access) await checkGrants(unit, access)
    },
    user: access ? { guid: access.userGuid, username: access.username } : undefined,
  }
}
