// What each stage of a request finds on ctx.state, filled in pipeline order:
// request-log → error-boundary → authenticate → (handler).

import type { Logger } from 'pino'
import type { AccessContext } from '../auth/access-context.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import type { Session } from '../persistence/session.ts'

export interface ApiState {
  requestId: string
  log: Logger
  /** Set by authenticate(); absent on sign-in and refresh. */
  access?: AccessContext
  tenant?: TenantDatabase
  /** Set by a workflow to run the request inside it; otherwise the tenant's pool session. */
  session?: Session
}
