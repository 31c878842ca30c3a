// The tenants of this server: which database each one uses, opened on first use and closed
// when idle or when another tenant needs connections, so that any number of tenants share a
// bounded number of connections. Opening a tenant creates its pool and nothing more; the
// connections of all pools together stay within Database:MaxConnections, less one
// notification connection per database server (auth/access-listener.ts), by a budget
// (connection-budget.ts) that closes the least recently used tenant nobody holds when a busy
// one needs a connection.
//
// A tenant in use is never closed. A request holds its tenant from authentication to its end
// (`acquire` … `release`: auth/authenticate.ts, auth/sign-in.ts), background work for the
// length of `use`. A connection wanted while every connection belongs to a tenant in use
// waits for one, at most Database:AcquireTimeoutSeconds (then 503); only `get` (for short
// admin commands) holds nothing.

import type { Config, TenantConfig } from '../config/load-config.ts'
import type { Model } from '../model/model.ts'
import { namingPolicy } from '../model/naming.ts'
import { databaseUrl } from './database-server.ts'
import { openTenantDatabase, type TenantDatabase } from './tenant-database.ts'
import { ConnectionBudget } from './connection-budget.ts'
import { propertyCipher } from './property-encryption.ts'
import { RowCache } from '../persistence/row-cache.ts'
import { ServiceError } from '../errors.ts'

/** A tenant's database, kept open until released (once; further calls do nothing). */
export interface TenantLease {
  readonly database: TenantDatabase
  release(): void
}

/**
 * Called when a tenant's pool is closed: `gone` when the tenant was removed, disabled or
 * changed in the config (what was kept for it must go too), not when it was only idle or
 * its connections were needed elsewhere.
 */
export type TenantCloseHook = (tenant: string, gone: boolean) => Promise<void> | void

/** How full one open tenant's pool is (for the metrics). */
export interface PoolUse {
  readonly tenant: string
  /** Connections checked out by requests and background work. */
  readonly inUse: number
  readonly idle: number
  /** Requests waiting for a connection: in the pool's queue, and heavy reads in their lane's (heavy-read-lane.ts). */
  readonly waiting: number
}

interface OpenTenant {
  readonly database: Promise<TenantDatabase>
  /** The database once open, for reading its pool's counts without waiting. */
  opened?: TenantDatabase
  /** Leases not yet released: while above 0 the tenant is not closed. */
  users: number
  lastUsed: number
  /** Set when the tenant was closed while leased: called once the last lease is released. */
  onDrained?: () => void
}

export class TenantRegistry {
  readonly #config: Config
  /** The tenants of the config file as last read (`reload`): live, unlike the rest of the config. */
  #tenants: ReadonlyMap<string, TenantConfig>
  readonly #model: Model
  readonly #serverUrl: string
  readonly #open = new Map<string, OpenTenant>()
  readonly #closeHooks: TenantCloseHook[] = []
  readonly #budget: ConnectionBudget
  readonly #poolSize: number
  readonly #sweeper: NodeJS.Timeout
  /** Rows writes loaded or wrote, for every tenant's later writes: one bound for the instance (persistence/row-cache.ts). */
  readonly #remembered: RowCache
  #closed = false
  /** Decides whether a tenant may be served now (migrations/schema-gate.ts); undefined: it may. */
  #admission?: (tenant: string) => Promise<void> | undefined

  constructor(config: Config, model: Model, serverUrl: string) {
    this.#config = config
    this.#tenants = config.Tenants
    this.#model = model
    this.#serverUrl = serverUrl
    const { MaxConnections, PoolSizePerTenant } = config.Database
    // One notification connection per database server the tenants live on.
    const servers = new Set([serverUrl, ...[...config.Tenants.values()].map((tenant) => this.urlOf(tenant))].map((url) => databaseUrl(url, 'postgres')))
    const budget = Math.max(1, MaxConnections - servers.size)
    this.#poolSize = Math.max(1, Math.min(PoolSizePerTenant, budget))
    this.#budget = new ConnectionBudget(budget, () => this.#makeRoom())
    this.#remembered = new RowCache(config.Database.RememberedRows)
    this.#sweeper = setInterval(() => void this.#closeIdle(config.Database.TenantIdleSeconds * 1000), 5_000)
    this.#sweeper.unref()
  }

  /** Whether requests of the tenant are accepted: configured and not disabled (one being moved is answered 503). */
  has(tenant: string): boolean {
    const settings = this.#tenants.get(tenant)
    return settings !== undefined && !settings.Disabled
  }

  /** Every tenant of the configuration that is served (not disabled, not being moved), by name. */
  configured(): ReadonlyMap<string, TenantConfig> {
    return new Map([...this.#tenants].filter(([, tenant]) => served(tenant)))
  }

  /** Tenants being moved (`entityctl tenant move`): configured and enabled, yet answered 503 until the move is done. */
  moving(): string[] {
    return [...this.#tenants].filter(([, tenant]) => tenant.Moving && !tenant.Disabled).map(([name]) => name)
  }

  /** The tenant's settings; undefined for a tenant not configured, disabled or being moved. */
  tenantConfig(tenant: string): TenantConfig | undefined {
    const settings = this.#tenants.get(tenant)
    return settings && served(settings) ? settings : undefined
  }

  /**
   * Follows a change of the config file's tenants (config-watch.ts): a tenant added is served
   * at its next request; one removed, disabled or being moved is refused at once and its pool
   * closed (requests holding it finish first); one whose key or database changed is closed, to
   * reopen with the new settings. Returns what changed, by name.
   */
  async reload(tenants: ReadonlyMap<string, TenantConfig>): Promise<{ added: string[]; removed: string[]; changed: string[] }> {
    const before = this.#tenants
    this.#tenants = tenants
    const servedIn = (map: ReadonlyMap<string, TenantConfig>, name: string) => map.has(name) && served(map.get(name)!)
    const added = [...tenants.keys()].filter((name) => servedIn(tenants, name) && !servedIn(before, name))
    const removed = [...before.keys()].filter((name) => servedIn(before, name) && !servedIn(tenants, name))
    const changed = [...tenants.keys()].filter((name) => {
      const [old, now] = [before.get(name), tenants.get(name)!]
      return old && servedIn(before, name) && servedIn(tenants, name) &&
        (old.EncryptionKey !== now.EncryptionKey || old.PreviousEncryptionKey !== now.PreviousEncryptionKey ||
          old.Database !== now.Database || old.ConnectionString !== now.ConnectionString)
    })
    // Requests already holding such a tenant finish on its old pool (#close); new ones are refused or reopen it.
    await Promise.allSettled([...removed, ...changed].map((name) => {
      const open = this.#open.get(name)
      return open ? this.#close(name, open, true) : Promise.all(this.#closeHooks.map(async (hook) => hook(name, true)))
    }))
    return { added, removed, changed }
  }

  /** The database server of tenants without a ConnectionString of their own. */
  get serverUrl(): string {
    return this.#serverUrl
  }

  urlOf(tenant: TenantConfig): string {
    return tenant.ConnectionString || databaseUrl(this.#serverUrl, tenant.Database)
  }

  /**
   * Every acquire asks `admission` first: a tenant whose schema is not the plugins' is refused
   * (its promise rejects with the 503) before it takes any room.
   */
  admitWith(admission: (tenant: string) => Promise<void> | undefined): void {
    this.#admission = admission
  }

  /** Registers what else must close with a tenant's pool (the access caches, when it is gone). */
  onClose(hook: TenantCloseHook): void {
    this.#closeHooks.push(hook)
  }

  /** Connections of all tenant pools, open or opening, the most there may be, and the new ones waiting for room. */
  connections(): { readonly used: number; readonly bound: number; readonly waiting: number } {
    return { used: this.#budget.used, bound: this.#budget.size, waiting: this.#budget.waiting }
  }

  /**
   * The tenant's database, held open until the lease is released; undefined for a tenant the
   * configuration does not know. Never waits for room: connections do (connection-budget.ts).
   */
  async acquire(tenant: string): Promise<TenantLease | undefined> {
    const entry = this.#tenants.get(tenant)
    if (entry?.Moving && !entry.Disabled) throw beingMoved(tenant)
    const settings = this.tenantConfig(tenant)
    if (!settings) return undefined
    const admitting = this.#admission?.(tenant)
    if (admitting) await admitting
    if (this.#closed) throw new Error('The tenant registry is closed.')
    const held = this.#open.get(tenant) ?? this.#openTenant(tenant, settings)
    held.users++
    held.lastUsed = Date.now()
    let database: TenantDatabase
    try {
      database = await held.database
    } catch (error) {
      this.#release(held)
      throw error
    }
    let released = false
    return {
      database,
      release: () => {
        if (released) return
        released = true
        this.#release(held)
      },
    }
  }

  /** Runs `work` with the tenant's database held open; undefined for an unknown tenant. */
  async use<T>(tenant: string, work: (database: TenantDatabase) => Promise<T>): Promise<T | undefined> {
    const lease = await this.acquire(tenant)
    if (!lease) return undefined
    try {
      return await work(lease.database)
    } finally {
      lease.release()
    }
  }

  /**
   * The tenant's database without holding it: it may be closed whenever another tenant needs
   * its connections. For short admin commands; requests and background work use acquire or use.
   */
  async get(tenant: string): Promise<TenantDatabase | undefined> {
    const lease = await this.acquire(tenant)
    lease?.release()
    return lease?.database
  }

  /** What the instance remembers for its writes (persistence/row-cache.ts), for the metrics. */
  rememberedRows(): { held: number; found: number; missed: number; changed: number } {
    const cache = this.#remembered
    return { held: cache.size, ...cache.lookups, changed: cache.changed }
  }

  /** The pool counts of every open tenant, read without touching a connection. */
  poolUse(): PoolUse[] {
    const uses: PoolUse[] = []
    for (const [tenant, open] of this.#open) {
      const database = open.opened
      if (!database) continue
      const { pool, heavyReads } = database
      uses.push({ tenant, inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount + heavyReads.waiting })
    }
    return uses
  }

  /** The tenants some request is using now. */
  inUse(): string[] {
    return [...this.#open].filter(([, open]) => open.users > 0).map(([tenant]) => tenant)
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#sweeper)
    await Promise.allSettled([...this.#open].map(([tenant, open]) => this.#close(tenant, open)))
  }

  #openTenant(tenant: string, settings: TenantConfig): OpenTenant {
    const open: OpenTenant = {
      database: openTenantDatabase(tenant, this.urlOf(settings), this.#model, {
        poolSize: this.#poolSize,
        statementTimeoutMs: this.#config.ApiOptions.QueryTimeoutSeconds * 1000,
        pluginTimeoutMs: this.#config.ApiOptions.PluginTimeoutSeconds * 1000,
        publicName: namingPolicy(this.#config.ApiOptions.EnableLowerCamelCase).toPublic,
        acquireTimeoutMs: this.#config.Database.AcquireTimeoutSeconds * 1000,
        planForValuesAfterMs: this.#config.Database.PlanForValuesAfterMs,
        cipher: propertyCipher(tenant, settings.EncryptionKey, settings.PreviousEncryptionKey),
        budget: this.#budget,
        // Each opening remembers under a scope of its own (row-cache.ts).
        remembered: this.#remembered.scope(),
      }),
      users: 0,
      lastUsed: Date.now(),
    }
    this.#open.set(tenant, open)
    open.database.then(
      (database) => {
        open.opened = database
      },
      () => {
        if (this.#open.get(tenant) === open) this.#open.delete(tenant)
      },
    )
    return open
  }

  #release(open: OpenTenant): void {
    open.users--
    open.lastUsed = Date.now()
    if (open.users > 0) return
    open.onDrained?.()
    // A connection may be waiting for this tenant to become closable.
    this.#budget.wake()
  }

  /** Closes the least recently used tenant that no request holds and that has connections. */
  #makeRoom(): void {
    let oldest: [string, OpenTenant] | undefined
    for (const entry of this.#open) {
      const [, open] = entry
      if (open.users > 0 || !open.opened || open.opened.pool.totalCount === 0) continue
      if (!oldest || open.lastUsed < oldest[1].lastUsed) oldest = entry
    }
    if (oldest) void this.#close(...oldest)
  }

  /** Closes the tenant's pool (its connections give their permits back as they end) and what closes with it. */
  async #close(tenant: string, open: OpenTenant, gone = false): Promise<void> {
    if (this.#open.get(tenant) !== open) return
    this.#open.delete(tenant)
    await Promise.allSettled([
      ...this.#closeHooks.map(async (hook) => hook(tenant, gone)),
      // A tenant changed in the config (a new key, another database) is closed while requests
      // still hold it: they finish on its old pool, which ends once the last one is released,
      // and new requests open the new one. Ending it under them would fail their next statement.
      this.#drained(open).then(() => open.database).then((database) => database.close()),
    ])
  }

  #drained(open: OpenTenant): Promise<void> {
    if (open.users === 0) return Promise.resolve()
    return new Promise((resolve) => {
      open.onDrained = resolve
    })
  }

  async #closeIdle(idleMs: number): Promise<void> {
    const now = Date.now()
    for (const [tenant, open] of this.#open) {
      if (open.users === 0 && now - open.lastUsed >= idleMs) await this.#close(tenant, open)
    }
  }
}

function served(tenant: TenantConfig): boolean {
  return !tenant.Disabled && !tenant.Moving
}

/** A move takes seconds to minutes (`entityctl tenant move`): the client comes back after it. */
const MOVE_RETRY_AFTER_SECONDS = 10

function beingMoved(tenant: string): ServiceError {
  return new ServiceError('ServiceUnavailable', `Tenant '${tenant}' is being moved to another database; try again in a moment.`, {
    headers: { 'Retry-After': String(MOVE_RETRY_AFTER_SECONDS) },
  })
}
