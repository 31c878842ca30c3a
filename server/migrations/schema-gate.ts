// Tenants that may not be served because their schema is not the plugins': a migration that
// would lose data was refused, a migration failed, or the start was told not to migrate
// (`serve --no-migrate`) and the schema is behind. Their requests get 503 with the reason;
// the others serve. A blocked tenant is looked at again on its next request (at most once per
// RECHECK_MS): once an admin has migrated it (`entityctl migrate …`), its recorded schema
// version is the model's and it serves again, without a restart.

import { ServiceError } from '../errors.ts'

const RECHECK_MS = 1000
/** Clients should come back later than a person needs to run a command. */
const RETRY_AFTER_SECONDS = 30

/** `unchecked`: out of service at the start (being moved), its schema is checked at its first request. */
export type BlockKind = 'refused' | 'behind' | 'failed' | 'unchecked'

export interface BlockedTenant {
  readonly tenant: string
  readonly kind: BlockKind
  /** One line, for the log, /readyz and the 503's message. */
  readonly reason: string
}

interface Blocked extends BlockedTenant {
  checkedAt: number
  checking?: Promise<void>
}

/** Whether the tenant may now be served (its schema is current); may retry a failed migration. */
export type Recheck = (blocked: BlockedTenant) => Promise<boolean>

export class SchemaGate {
  readonly #blocked = new Map<string, Blocked>()
  readonly #recheck: Recheck

  constructor(recheck: Recheck) {
    this.#recheck = recheck
  }

  block(tenant: string, kind: BlockKind, reason: string): void {
    this.#blocked.set(tenant, { tenant, kind, reason, checkedAt: Date.now() })
  }

  /** A tenant whose schema the start did not read: its first request checks it, at once. */
  checkLater(tenant: string, reason: string): void {
    this.#blocked.set(tenant, { tenant, kind: 'unchecked', reason, checkedAt: 0 })
  }

  /**
   * Nothing (undefined, no promise to wait for) for a tenant that may be served: the common
   * case costs one map lookup. Otherwise a promise that rejects with the 503, or resolves
   * when a recheck found the tenant current.
   */
  admit = (tenant: string): Promise<void> | undefined => {
    const blocked = this.#blocked.get(tenant)
    if (!blocked) return undefined
    if (blocked.checking) return blocked.checking
    if (Date.now() - blocked.checkedAt < RECHECK_MS) return Promise.reject(unavailable(blocked))
    blocked.checking = this.#recheck(blocked)
      .catch(() => false)
      .then((current) => {
        blocked.checkedAt = Date.now()
        blocked.checking = undefined
        // The recheck may have blocked it anew (a migration refused or failed): that reason, then.
        if (!current) throw unavailable(this.#blocked.get(tenant) ?? blocked)
        if (this.#blocked.get(tenant) === blocked) this.#blocked.delete(tenant)
      })
    return blocked.checking
  }

  /** The tenants refused for their schema; not those merely not checked yet. */
  blocked(): BlockedTenant[] {
    return [...this.#blocked.values()].filter(({ kind }) => kind !== 'unchecked').map(({ tenant, kind, reason }) => ({ tenant, kind, reason }))
  }
}

function unavailable(blocked: BlockedTenant): ServiceError {
  return new ServiceError('ServiceUnavailable', `Tenant '${blocked.tenant}' is unavailable: ${blocked.reason}`, {
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  })
}
