// What the OData routes and handlers are handed by the composition root (server/start.ts).

import type { Logger } from 'pino'
import type { Config } from '../../config/load-config.ts'
import type { Model } from '../../model/model.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import type { TenantRegistry } from '../../tenancy/tenant-registry.ts'
import type { TenantDatabase } from '../../tenancy/tenant-database.ts'
import type { ReadPlanCache } from '../plan/read-plan-cache.ts'

export interface OdataServices {
  readonly config: Config
  readonly model: Model
  readonly naming: NamingPolicy
  readonly tenants: TenantRegistry
  readonly logger: Logger
  /** Reads prepared once per shape and caller. */
  readonly readPlans: ReadPlanCache
  /**
   * The access cache, told of writes that change who may do what: after committing a write to
   * User, Role, UserRole, RoleResponsibility or Responsibility; resolves once every instance
   * has heard of it (auth/access-service.ts).
   */
  readonly access: { changed(db: TenantDatabase): Promise<void> }
}
