// The long-lived parts a request handler may use, built once per server.

import type { AppDeps } from './http/app.ts'
import { namingPolicy, type NamingPolicy } from './model/naming.ts'
import { AccessService } from './auth/access-service.ts'
import { AccessTokens } from './auth/access-tokens.ts'
import { SignInThrottle } from './auth/sign-in-throttle.ts'
import { ReadPlans } from './odata/handlers/read-plans.ts'
import { NO_METRICS, type Metrics } from './metrics/metrics.ts'

export interface Services extends AppDeps {
  readonly naming: NamingPolicy
  /**
   * Who may do what, cached across requests. After committing a write to User, Role,
   * UserRole, RoleResponsibility or Responsibility, await `access.changed(tenant)`: every
   * instance has heard of it when it returns.
   */
  readonly access: AccessService
  /** Reads compiled once per shape and caller. */
  readonly readPlans: ReadPlans
  /** Credentials: access tokens (JWT) and the sign-in throttle. */
  readonly auth: { readonly tokens: AccessTokens; readonly throttle: SignInThrottle }
  /** What the stages count for Prometheus (metrics/metrics.ts); does nothing when metrics are off. */
  readonly metrics: Metrics
  /** Releases what the services hold (listeners, timers); called on shutdown. */
  close(): Promise<void>
}

export function createServices(deps: AppDeps): Services {
  const access = new AccessService(deps)
  return {
    ...deps,
    naming: namingPolicy(deps.config.ApiOptions.EnableLowerCamelCase),
    access,
    readPlans: new ReadPlans(),
    metrics: deps.metrics ?? NO_METRICS,
    auth: {
      tokens: new AccessTokens(deps.config.JWT, (tenant) => deps.tenants.has(tenant)),
      throttle: new SignInThrottle(deps.config.SignIn),
    },
    close: () => access.close(),
  }
}
