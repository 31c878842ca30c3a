// The tenants of this server: which database each one uses, opened on first use and
// closed when idle, so a hundred tenants share a bounded number of connections
// (Database:MaxConnections; each open tenant holds at most PoolSizePerTenant).

import type { Config, TenantConfig } from '../config/load-config.ts'
import type { Model } from '../model/model.ts'
import { databaseUrl } from './database-server.ts'
import { openTenantDatabase, type TenantDatabase } from './tenant-database.ts'
import { propertyCipher } from './property-encryption.ts'

interface OpenTenant {
  readonly database: Promise<TenantDatabase>
  lastUsed: number
}

export class TenantRegistry {
  readonly #config: Config
  readonly #model: Model
  readonly #serverUrl: string
  readonly #open = new Map<string, OpenTenant>()
  readonly #sweeper: NodeJS.Timeout

  constructor(config: Config, model: Model, serverUrl: string) {
    this.#config = config
    this.#model = model
    this.#serverUrl = serverUrl
    this.#sweeper = setInterval(() => void this.#closeIdle(config.Database.TenantIdleSeconds * 1000), 5_000)
    this.#sweeper.unref()
  }

  has(tenant: string): boolean {
    return this.#config.Tenants.has(tenant)
  }

  tenantConfig(tenant: string): TenantConfig | undefined {
    return this.#config.Tenants.get(tenant)
  }

  urlOf(tenant: TenantConfig): string {
    return tenant.ConnectionString || databaseUrl(this.#serverUrl, tenant.Database)
  }

  /** The tenant's database; undefined for a tenant the configuration does not know. */
  async get(tenant: string): Promise<TenantDatabase | undefined> {
    const settings = this.#config.Tenants.get(tenant)
    if (!settings) return undefined
    let open = this.#open.get(tenant)
    if (!open) {
      await this.#makeRoom()
      const database = openTenantDatabase(tenant, this.urlOf(settings), this.#model, {
        poolSize: this.#config.Database.PoolSizePerTenant,
        cipher: propertyCipher(tenant, settings.EncryptionKey),
      })
      open = { database, lastUsed: Date.now() }
      this.#open.set(tenant, open)
      database.catch(() => this.#open.delete(tenant))
    }
    open.lastUsed = Date.now()
    return open.database
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper)
    const all = [...this.#open.values()]
    this.#open.clear()
    await Promise.allSettled(all.map(async (open) => (await open.database).close()))
  }

  /** Keeps open pools × PoolSizePerTenant within MaxConnections by closing the least recently used. */
  async #makeRoom(): Promise<void> {
    const { MaxConnections, PoolSizePerTenant } = this.#config.Database
    const capacity = Math.max(1, Math.floor(MaxConnections / PoolSizePerTenant))
    while (this.#open.size >= capacity) {
      const [oldest] = [...this.#open.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)
      this.#open.delete(oldest[0])
      await (await oldest[1].database).close().catch(() => {})
    }
  }

  async #closeIdle(idleMs: number): Promise<void> {
    const now = Date.now()
    for (const [tenant, open] of this.#open) {
      if (now - open.lastUsed < idleMs) continue
      this.#open.delete(tenant)
      await (await open.database).close().catch(() => {})
    }
  }
}
