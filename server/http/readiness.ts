// Whether this server can serve (GET /readyz): the configured database server answers, on a
// connection of its own, within READY_TIMEOUT_MS. Asked by probes, perhaps many at once: one
// check runs at a time and its answer is kept for CACHE_MS, so a probe storm costs PostgreSQL
// at most one connection per database server a second, whatever the number of tenants.
//
// Unavailable tenants are named:
// - tenants on the database server: all of them when it does not answer; otherwise those
//   whose database is missing or refuses connections (pg_database, one query for them all);
// - tenants with a ConnectionString of their own: each distinct one is connected to, and
//   its tenants are unavailable when that fails.
// - tenants being moved (`entityctl tenant move`), answered 503 until it is done;
// - tenants refused for their schema (migrations/schema-gate.ts: a migration that would lose
//   data, or one behind under `serve --no-migrate`), also in `migrationsPending` with why.
// Only the configured database server decides the status (503): one tenant's database down
// or its schema behind does not take the instance out of rotation, since every instance
// would fail it alike.

import pg from 'pg'
import type { TenantConfig } from '../config/load-config.ts'
import type { TenantRegistry } from '../tenancy/tenant-registry.ts'
import type { BlockedTenant, SchemaGate } from '../migrations/schema-gate.ts'

const READY_TIMEOUT_MS = 2000
const CACHE_MS = 1000

export interface ReadinessReport {
  readonly status: 'ready' | 'unavailable'
  readonly database: 'up' | 'down'
  readonly unavailableTenants: readonly string[]
  /** Tenants whose schema is not the plugins', and why; absent when there are none. */
  readonly migrationsPending?: readonly BlockedTenant[]
}

export class Readiness {
  readonly #tenants: TenantRegistry
  readonly #schemaGate: SchemaGate | undefined
  #last?: { readonly at: number; readonly report: ReadinessReport }
  #running?: Promise<ReadinessReport>

  constructor(tenants: TenantRegistry, schemaGate?: SchemaGate) {
    this.#tenants = tenants
    this.#schemaGate = schemaGate
  }

  report(): Promise<ReadinessReport> {
    if (this.#last && Date.now() - this.#last.at < CACHE_MS) return Promise.resolve(this.#last.report)
    return (this.#running ??= this.#check().then((report) => {
      this.#last = { at: Date.now(), report }
      this.#running = undefined
      return report
    }))
  }

  async #check(): Promise<ReadinessReport> {
    const onServer: TenantConfig[] = []
    const byUrl = new Map<string, string[]>()
    for (const tenant of this.#tenants.configured().values()) {
      if (!tenant.ConnectionString) onServer.push(tenant)
      else byUrl.set(tenant.ConnectionString, [...(byUrl.get(tenant.ConnectionString) ?? []), tenant.name])
    }
    const [accepting, ...others] = await Promise.all([
      ask(this.#tenants.serverUrl, async (client) => {
        const { rows } = await client.query<{ datname: string }>(
          'select datname from pg_database where datallowconn and datname = any($1::text[])',
          [onServer.map((tenant) => tenant.Database)],
        )
        return new Set(rows.map((row) => row.datname))
      }),
      ...[...byUrl.keys()].map((url) => ask(url, async (client) => {
        await client.query('select 1')
        return true
      })),
    ])
    const unavailable = onServer.filter((tenant) => !accepting?.has(tenant.Database)).map((tenant) => tenant.name)
    ;[...byUrl.values()].forEach((names, i) => {
      if (!others[i]) unavailable.push(...names)
    })
    const up = accepting !== undefined
    unavailable.push(...this.#tenants.moving())
    const pending = this.#schemaGate?.blocked() ?? []
    for (const { tenant } of pending) if (!unavailable.includes(tenant)) unavailable.push(tenant)
    return {
      status: up ? 'ready' : 'unavailable',
      database: up ? 'up' : 'down',
      unavailableTenants: unavailable.sort(),
      ...(pending.length > 0 ? { migrationsPending: pending } : {}),
    }
  }
}

/** `question`'s answer on a connection of its own, undefined when the server does not answer in time; never throws. */
async function ask<T>(url: string, question: (client: pg.Client) => Promise<T>): Promise<T | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: READY_TIMEOUT_MS, query_timeout: READY_TIMEOUT_MS })
  // A connection lost meanwhile fails the query; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  try {
    await client.connect()
    return await question(client)
  } catch {
    return undefined
  } finally {
    await client.end().catch(() => {})
  }
}
