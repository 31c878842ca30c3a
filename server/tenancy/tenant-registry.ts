// The tenants of this server: which database each one uses, opened on first use and closed
// when idle or when another tenant needs the room, so that any number of tenants share a
// bounded number of connections. An open tenant holds at most PoolSizePerTenant pooled
// connections plus one for its access listener (auth/access-listener.ts, closed with the pool
// through onClose), so at most MaxConnections / (PoolSizePerTenant + 1) tenants are open at
// once; a tenant still closing counts until its connections are gone.
//
// A tenant in use is never closed. A request holds its tenant from authentication to its end
// (`acquire` … `release`: auth/authenticate.ts, auth/sign-in.ts), background work for the
// length of `use`. A tenant that needs room while every open tenant is in use waits until one
// is released; only `get` (for short admin commands) holds nothing.

import type { Config, TenantConfig } from '../config/load-config.ts'
import type { Model } from '../model/model.ts'
import { databaseUrl } from './database-server.ts'
import { openTenantDatabase, type TenantDatabase } from './tenant-database.ts'
import { propertyCipher } from './property-encryption.ts'

/** A tenant's database, kept open until released (once; further calls do nothing). */
export interface TenantLease {
  readonly database: TenantDatabase
  release(): void
}

/** Called when a tenant's pool is closed, before its room is given to another tenant. */
export type TenantCloseHook = (tenant: string) => Promise<void> | void

/** How full one open tenant's pool is (for the metrics). */
export interface PoolUse {
  readonly tenant: string
  /** Connections checked out by requests and background work. */
  readonly inUse: number
  readonly idle: number
  /** Requests waiting for a connection. */
  readonly waiting: number
}

interface OpenTenant {
  readonly database: Promise<TenantDatabase>
  /** The database once open, for reading its pool's counts without waiting. */
  opened?: TenantDatabase
  /** Leases not yet released: while above 0 the tenant is not closed. */
  users: number
  lastUsed: number
}

export class TenantRegistry {
  readonly #config: Config
  readonly #model: Model
  readonly #serverUrl: string
  readonly #open = new Map<string, OpenTenant>()
  /** Tenants being closed: their connections count until they are gone. */
  #closing = 0
  /** Acquirers waiting for room, woken when a tenant is released or closed. */
  #waiting: (() => void)[] = []
  readonly #closeHooks: TenantCloseHook[] = []
  readonly #capacity: number
  readonly #poolSize: number
  readonly #sweeper: NodeJS.Timeout
  #closed = false

  constructor(config: Config, model: Model, serverUrl: string) {
    this.#config = config
    this.#model = model
    this.#serverUrl = serverUrl
    const { MaxConnections, PoolSizePerTenant } = config.Database
    // The listener's connection must fit beside the pool, even with MaxConnections that small.
    this.#poolSize = Math.max(1, Math.min(PoolSizePerTenant, MaxConnections - 1))
    this.#capacity = Math.max(1, Math.floor(MaxConnections / (this.#poolSize + 1)))
    this.#sweeper = setInterval(() => void this.#closeIdle(config.Database.TenantIdleSeconds * 1000), 5_000)
    this.#sweeper.unref()
  }

  has(tenant: string): boolean {
    return this.#config.Tenants.has(tenant)
  }

  /** Every tenant of the configuration, by name. */
  configured(): ReadonlyMap<string, TenantConfig> {
    return this.#config.Tenants
  }

  tenantConfig(tenant: string): TenantConfig | undefined {
    return this.#config.Tenants.get(tenant)
  }

  /** The database server of tenants without a ConnectionString of their own. */
  get serverUrl(): string {
    return this.#serverUrl
  }

  urlOf(tenant: TenantConfig): string {
    return tenant.ConnectionString || databaseUrl(this.#serverUrl, tenant.Database)
  }

  /** Registers what else must close with a tenant's pool (the access listener's connection). */
  onClose(hook: TenantCloseHook): void {
    this.#closeHooks.push(hook)
  }

  /**
   * The tenant's database, held open until the lease is released; undefined for a tenant the
   * configuration does not know. Waits while every open tenant is in use and there is no room.
   */
  async acquire(tenant: string): Promise<TenantLease | undefined> {
    const settings = this.#config.Tenants.get(tenant)
    if (!settings) return undefined
    let open = this.#open.get(tenant)
    while (!open) {
      if (this.#closed) throw new Error('The tenant registry is closed.')
      // Checked and claimed without a pause between, so concurrent acquirers cannot overshoot.
      if (this.#open.size + this.#closing < this.#capacity) {
        open = this.#openTenant(tenant, settings)
        break
      }
      const idle = this.#leastRecentlyUsedIdle()
      if (idle) await this.#close(...idle)
      else await new Promise<void>((resolve) => this.#waiting.push(resolve))
      open = this.#open.get(tenant)
    }
    const held = open
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
   * the room. For short admin commands; requests and background work use acquire or use.
   */
  async get(tenant: string): Promise<TenantDatabase | undefined> {
    const lease = await this.acquire(tenant)
    lease?.release()
    return lease?.database
  }

  /** The pool counts of every open tenant, read without touching a connection. */
  poolUse(): PoolUse[] {
    const uses: PoolUse[] = []
    for (const [tenant, open] of this.#open) {
      const pool = open.opened?.pool
      if (pool) uses.push({ tenant, inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount })
    }
    return uses
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#sweeper)
    this.#wake()
    await Promise.allSettled([...this.#open].map(([tenant, open]) => this.#close(tenant, open)))
  }

  #openTenant(tenant: string, settings: TenantConfig): OpenTenant {
    const open: OpenTenant = {
      database: openTenantDatabase(tenant, this.urlOf(settings), this.#model, {
        poolSize: this.#poolSize,
        statementTimeoutMs: this.#config.ApiOptions.QueryTimeoutSeconds * 1000,
        acquireTimeoutMs: this.#config.Database.AcquireTimeoutSeconds * 1000,
        cipher: propertyCipher(tenant, settings.EncryptionKey, settings.PreviousEncryptionKey),
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
        this.#wake()
      },
    )
    return open
  }

  #release(open: OpenTenant): void {
    open.users--
    open.lastUsed = Date.now()
    if (open.users === 0) this.#wake()
  }

  #leastRecentlyUsedIdle(): [string, OpenTenant] | undefined {
    let oldest: [string, OpenTenant] | undefined
    for (const entry of this.#open) {
      if (entry[1].users === 0 && (!oldest || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry
    }
    return oldest
  }

  /** Closes the tenant's pool and what closes with it; its room is free once they are gone. */
  async #close(tenant: string, open: OpenTenant): Promise<void> {
    if (this.#open.get(tenant) !== open) return
    this.#open.delete(tenant)
    this.#closing++
    try {
      await Promise.allSettled([
        ...this.#closeHooks.map(async (hook) => hook(tenant)),
        open.database.then((database) => database.close()),
      ])
    } finally {
      this.#closing--
      this.#wake()
    }
  }

  #wake(): void {
    const waiting = this.#waiting
    this.#waiting = []
    for (const resolve of waiting) resolve()
  }

  async #closeIdle(idleMs: number): Promise<void> {
    const now = Date.now()
    for (const [tenant, open] of this.#open) {
      if (open.users === 0 && now - open.lastUsed >= idleMs) await this.#close(tenant, open)
    }
  }
}
