// Who may do what, resolved from current assignments and cached across requests
// (specification 5.9 c–d, 5.10): a user's state, roles and responsibilities for
// ApiOptions:RoleCacheExpirationMinutes, a PAT's scope for ResponsibilityCacheExpirationMinutes
// (0 disables either). A request with a cached credential runs no SQL.
//
// Freshness: a change's writer calls changed() (the server's write paths) or
// announceAccessChange (the CLI) after committing; the announcement reaches every instance
// through its database server's notification connection (access-listener.ts) before the
// writer answers. A tenant is cached only while that connection listens, and a load that
// raced an invalidation is not stored (per-tenant generation).

import type { Logger } from 'pino'
import type { Config } from '../config/load-config.ts'
import type { Permission } from '../model/declarations.ts'
import type { Model } from '../model/model.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import type { TenantRegistry } from '../tenancy/tenant-registry.ts'
import { AuthError } from '../errors.ts'
import type { AccessContext } from './access-context.ts'
import { AccessListener, type ConfigHandler } from './access-listener.ts'
import { disablePat, loadPatRow, loadUserRow, recordPatUse, type PatRow } from './access-queries.ts'

export interface UserAccess {
  readonly userGuid: string
  readonly username: string
  readonly disabled: boolean
  readonly hasFullAccess: boolean
  /** Roles assigned directly. */
  readonly roleCount: number
  /** Guid → name of the responsibilities held now (all of them for a full-access user). */
  readonly responsibilities: ReadonlyMap<string, string>
  /** The access of an interactive sign-in of this user. */
  readonly context: AccessContext
}

interface PatRecord extends PatRow {
  /** When this instance last recorded a use, ms since the epoch. */
  lastUseRecorded: number
  /** The scope derived for one state of the owner; recomputed when the owner's entry changes. */
  derived?: { readonly owner: UserAccess; readonly context: AccessContext }
}

interface Entry<T> {
  readonly value: T
  readonly expiresAt: number
}

interface TenantCache {
  generation: number
  readonly users: Map<string, Entry<UserAccess>>
  readonly pats: Map<string, Entry<PatRecord>>
  readonly loading: Map<string, Promise<UserAccess | undefined>>
}

/** LastUsedAt is written at most this often per PAT, in batches (decisions: cheap). */
const USE_RECORD_INTERVAL_MS = 60_000

export class AccessService {
  readonly #model: Model
  readonly #tenants: TenantRegistry
  readonly #logger: Logger
  readonly #roleTtlMs: number
  readonly #patTtlMs: number
  readonly #caches = new Map<string, TenantCache>()
  readonly #listener: AccessListener
  readonly #pendingUses = new Map<string, Map<string, Date>>()
  readonly #useFlusher: NodeJS.Timeout
  /** Milliseconds since the epoch: when cache entries expire (a test moves it instead of sleeping). */
  readonly #clock: () => number

  constructor(deps: { config: Config; model: Model; tenants: TenantRegistry; logger: Logger; clock?: () => number }) {
    this.#clock = deps.clock ?? Date.now
    this.#model = deps.model
    this.#tenants = deps.tenants
    this.#logger = deps.logger
    this.#roleTtlMs = deps.config.ApiOptions.RoleCacheExpirationMinutes * 60_000
    this.#patTtlMs = deps.config.ApiOptions.ResponsibilityCacheExpirationMinutes * 60_000
    this.#listener = new AccessListener((tenant, table) => this.#changed(tenant, table), deps.logger)
    // A tenant closed because it was idle, or its connections were needed, keeps its cache:
    // the listener still hears its changes, and its next request needs no query for access.
    // One removed, disabled or changed in the config loses it.
    deps.tenants.onClose((tenant, gone) => {
      if (!gone) return
      this.#caches.delete(tenant)
      this.#listener.stop(tenant)
    })
    this.#useFlusher = setInterval(() => void this.flushPatUses(), USE_RECORD_INTERVAL_MS)
    this.#useFlusher.unref()
  }

  /**
   * Drops everything cached for the tenant. Call after committing a write to User, Role,
   * UserRole, RoleResponsibility or Responsibility (other instances learn it by NOTIFY).
   */
  invalidateTenant(tenant: string): void {
    const cache = this.#caches.get(tenant)
    if (!cache) return
    cache.generation++
    cache.users.clear()
    cache.pats.clear()
    cache.loading.clear()
  }

  /** Drops the cached PAT records of the tenant (after a revoke or regenerate on this instance). */
  invalidatePats(tenant: string): void {
    const cache = this.#caches.get(tenant)
    if (!cache) return
    cache.generation++
    cache.pats.clear()
  }

  /**
   * After committing a change to access (roles, assignments, users, PATs): drops this
   * instance's caches of the tenant, announces the change and waits until every instance
   * has heard it (access-listener.ts barrier), so the client's next request, wherever it
   * lands, sees it. A round trip or two: for the rare writes to access only. `table` '_Pat'
   * lets the others keep their cached users.
   */
  async changed(db: TenantDatabase, table = '*'): Promise<void> {
    if (table === '_Pat') this.invalidatePats(db.tenant)
    else this.invalidateTenant(db.tenant)
    await this.#listener.barrier(db.tenant, db.url, table)
  }

  /**
   * Applies the config changes the CLI announces on the deployment's database server before
   * answering them; the notification connection shares its listener (access-listener.ts).
   */
  followConfig(serverUrl: string, onConfig: ConfigHandler): void {
    this.#listener.followConfig(serverUrl, onConfig)
  }

  /** The user's current access; undefined when no such user exists (any more). */
  async forUser(db: TenantDatabase, userGuid: string, options: { fresh?: boolean } = {}): Promise<UserAccess | undefined> {
    const cache = this.#cacheOf(db.tenant)
    const cached = cache.users.get(userGuid)
    if (cached && !options.fresh) {
      if (cached.expiresAt > this.#clock()) return cached.value
      cache.users.delete(userGuid)
    }
    if (options.fresh) return this.#loadUser(db, userGuid)
    let loading = cache.loading.get(userGuid)
    if (!loading) {
      loading = this.#loadAndCacheUser(db, userGuid, cache)
      cache.loading.set(userGuid, loading)
      const forget = () => {
        if (cache.loading.get(userGuid) === loading) cache.loading.delete(userGuid)
      }
      loading.then(forget, forget)
    }
    return loading
  }

  /**
   * The access a PAT grants now: its responsibilities intersected with its owner's current
   * ones (specification 5.8), or full access for an active fallback PAT (5.11). 401 for an
   * unknown, revoked, disabled or expired PAT or a disabled owner.
   */
  async forPat(db: TenantDatabase, hash: Buffer): Promise<AccessContext> {
    const pat = await this.#patRecord(db, hash)
    if (!pat) throw AuthError.invalidToken('unknown personal access token')
    if (pat.revokedAt) throw AuthError.invalidToken('the personal access token was revoked')
    if (pat.disabledAt) throw AuthError.invalidToken('the personal access token was disabled')
    if (pat.expiresAt <= Date.now()) throw AuthError.invalidToken('the personal access token has expired')
    const owner = await this.forUser(db, pat.userGuid)
    if (!owner || owner.disabled) throw AuthError.invalidToken('the owner of the personal access token cannot sign in')
    if (pat.isFullAccessFallback && !(owner.hasFullAccess && owner.roleCount === 0)) {
      // The change that ended the fallback conditions disables it too (a trigger); this is
      // the check at use time, for rows that trigger never saw.
      await disablePat(db.pool, pat.id)
      await this.changed(db, '_Pat')
      throw AuthError.invalidToken('the full-access fallback PAT was disabled: its owner now has a role or no full access')
    }
    this.#recordUse(db.tenant, pat)
    if (pat.derived?.owner === owner) return pat.derived.context
    const context = pat.isFullAccessFallback
      ? accessContext(db.tenant, owner, 'pat', true, owner.responsibilities, this.#model, pat.id)
      : accessContext(db.tenant, owner, 'pat', false, intersect(pat.responsibilityIds, owner.responsibilities), this.#model, pat.id)
    pat.derived = { owner, context }
    return context
  }

  /** Writes the PAT uses recorded since the last flush (also before listing PATs, and on close). */
  async flushPatUses(onlyTenant?: string): Promise<void> {
    for (const [tenant, uses] of [...this.#pendingUses]) {
      if (onlyTenant !== undefined && tenant !== onlyTenant) continue
      this.#pendingUses.delete(tenant)
      try {
        await this.#tenants.use(tenant, (db) => recordPatUse(db.pool, uses))
      } catch (error) {
        this.#logger.warn({ tenant, err: (error as Error).message }, 'could not record PAT uses')
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#useFlusher)
    await this.flushPatUses()
    await this.#listener.close()
    this.#caches.clear()
  }

  #changed(tenant: string, table: string): void {
    if (table === '_Pat') this.invalidatePats(tenant)
    else this.invalidateTenant(tenant)
  }

  #cacheOf(tenant: string): TenantCache {
    let cache = this.#caches.get(tenant)
    if (!cache) {
      cache = { generation: 0, users: new Map(), pats: new Map(), loading: new Map() }
      this.#caches.set(tenant, cache)
    }
    return cache
  }

  async #loadAndCacheUser(db: TenantDatabase, userGuid: string, cache: TenantCache): Promise<UserAccess | undefined> {
    const cacheable = this.#roleTtlMs > 0 && (await this.#listener.listening(db.tenant, db.url))
    const generation = cache.generation
    const user = await this.#loadUser(db, userGuid)
    if (user && cacheable && cache.generation === generation) {
      cache.users.set(userGuid, { value: user, expiresAt: this.#clock() + this.#roleTtlMs })
    }
    return user
  }

  async #loadUser(db: TenantDatabase, userGuid: string): Promise<UserAccess | undefined> {
    const row = await loadUserRow(db.pool, userGuid)
    if (!row) return undefined
    const responsibilities = new Map(row.responsibilities)
    const user = {
      userGuid,
      username: row.username,
      disabled: row.disabled,
      hasFullAccess: row.hasFullAccess,
      roleCount: row.roleCount,
      responsibilities,
    }
    return { ...user, context: accessContext(db.tenant, user, 'user', row.hasFullAccess, responsibilities, this.#model) }
  }

  async #patRecord(db: TenantDatabase, hash: Buffer): Promise<PatRecord | undefined> {
    const cache = this.#cacheOf(db.tenant)
    const key = hash.toString('base64url')
    const cached = cache.pats.get(key)
    if (cached) {
      if (cached.expiresAt > this.#clock()) return cached.value
      cache.pats.delete(key)
    }
    const cacheable = this.#patTtlMs > 0 && (await this.#listener.listening(db.tenant, db.url))
    const generation = cache.generation
    const row = await loadPatRow(db.pool, hash)
    if (!row) return undefined
    const record: PatRecord = { ...row, lastUseRecorded: row.lastUsedAt ?? 0 }
    if (cacheable && cache.generation === generation) cache.pats.set(key, { value: record, expiresAt: this.#clock() + this.#patTtlMs })
    return record
  }

  #recordUse(tenant: string, pat: PatRecord): void {
    const now = Date.now()
    if (now - pat.lastUseRecorded < USE_RECORD_INTERVAL_MS) return
    pat.lastUseRecorded = now
    let uses = this.#pendingUses.get(tenant)
    if (!uses) this.#pendingUses.set(tenant, (uses = new Map()))
    uses.set(pat.id, new Date(now))
  }
}

function intersect(ids: readonly string[], held: ReadonlyMap<string, string>): Map<string, string> {
  const result = new Map<string, string>()
  for (const id of ids) {
    const name = held.get(id)
    if (name !== undefined) result.set(id, name)
  }
  return result
}

/** Permissions come from the plugins' declarations, by responsibility name. */
export function accessContext(
  tenant: string,
  user: { readonly userGuid: string; readonly username: string },
  credential: 'user' | 'pat',
  fullAccess: boolean,
  responsibilities: ReadonlyMap<string, string>,
  model: Model,
  patId?: string,
): AccessContext {
  const permissions = new Map<string, Set<Permission>>()
  for (const name of responsibilities.values()) {
    for (const [entity, granted] of Object.entries(model.responsibilities.get(name)?.permissions ?? {})) {
      let set = permissions.get(entity)
      if (!set) permissions.set(entity, (set = new Set()))
      for (const permission of granted) set.add(permission)
    }
  }
  return {
    tenant,
    userGuid: user.userGuid,
    username: user.username,
    credential,
    ...(patId ? { patId } : {}),
    fullAccess,
    responsibilities: new Set(responsibilities.values()),
    permissions,
  }
}
