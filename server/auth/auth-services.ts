// What the auth subsystem is handed by the composition root (server/start.ts): sign-in,
// tokens, the access cache and the routes of users and PATs need these, and nothing else.

import type { Logger } from 'pino'
import type { Config } from '../config/load-config.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { Model } from '../model/model.ts'
import type { NamingPolicy } from '../model/naming.ts'
import type { TenantRegistry } from '../tenancy/tenant-registry.ts'
import type { AccessService } from './access-service.ts'
import type { AccessTokens } from './access-tokens.ts'
import type { SignInThrottle } from './sign-in-throttle.ts'

export interface AuthServices {
  readonly config: Config
  readonly model: Model
  readonly tenants: TenantRegistry
  readonly logger: Logger
  readonly naming: NamingPolicy
  /**
   * Who may do what, cached across requests. After committing a write to User, Role,
   * UserRole, RoleResponsibility or Responsibility, await `access.changed(tenant)`: every
   * instance has heard of it when it returns.
   */
  readonly access: AccessService
  /** Credentials: access tokens (JWT) and the sign-in throttle. */
  readonly auth: { readonly tokens: AccessTokens; readonly throttle: SignInThrottle }
  /** What sign-in counts for Prometheus; does nothing when metrics are off. */
  readonly metrics: Metrics
}
