// One tenant's database: a pg pool of its own, which requests use directly
// (persistence/request-connection.ts) with the pool's heavy-read lane. Opened lazily, closed
// when idle. Opening creates the pool and nothing else (no connection until the first
// statement), so a tenant costs milliseconds to open; the schema diff of migrations has its
// own short-lived MikroORM instance (migrations/schema-plan.ts).

import pg from 'pg'
import type { Model } from '../model/model.ts'
import type { PropertyCipher } from './property-encryption.ts'
import { HeavyReadLane } from './heavy-read-lane.ts'
import { PlanChoice } from '../persistence/plan-choice.ts'
import type { RowCacheScope } from '../persistence/row-cache.ts'
import { EntityTagKey } from '../persistence/entity-tag.ts'
import { budgetedClient, underBudget, type ConnectionBudget } from './connection-budget.ts'

export interface TenantDatabase {
  readonly tenant: string
  readonly url: string
  readonly model: Model
  readonly pool: pg.Pool
  /** Encrypts and decrypts the properties plugins mark encrypted, with this tenant's key. */
  readonly cipher: PropertyCipher | undefined
  /** How long a request waits for a pooled connection (and a heavy read for its lane); 0: no limit. */
  readonly acquireTimeoutMs: number
  /** Heavy reads share the pool less one connection, which stays for cheap work (heavy-read-lane.ts). */
  readonly heavyReads: HeavyReadLane
  /** Which read shapes run with plans made for their values (persistence/plan-choice.ts). */
  readonly plans: PlanChoice
  /** The secret of the ETags writes answer and check (persistence/entity-tag.ts), read once while open. */
  readonly entityTagKey: EntityTagKey
  /** Rows writes loaded or wrote, remembered for the next writes (persistence/row-cache.ts); absent: none. */
  readonly remembered?: RowCacheScope
  /** How long one call of plugin code may keep a request waiting (rules/plugin-call.ts); 0 or absent: no limit. */
  readonly pluginTimeoutMs?: number
  /** A property's name as the API's clients know it, for validation errors (persistence/unit-of-work.ts); absent: as declared. */
  readonly publicName?: (declared: string) => string
  close(): Promise<void>
}

export interface TenantDatabaseOptions {
  readonly poolSize: number
  readonly cipher?: PropertyCipher
  /**
   * statement_timeout of every connection of the pool (0 or absent: none). The server's
   * tenant pools have ApiOptions:QueryTimeoutSeconds; the CLI and migrations open their own.
   */
  readonly statementTimeoutMs?: number
  /** The pool's wait for a connection (pg-pool connectionTimeoutMillis); 0 or absent: none. */
  readonly acquireTimeoutMs?: number
  /** The instance's bound over all tenant pools (tenant-registry.ts); absent: only poolSize bounds. */
  readonly budget?: ConnectionBudget
  /** Database:PlanForValuesAfterMs (persistence/plan-choice.ts); absent or 0: every statement plans generically. */
  readonly planForValuesAfterMs?: number
  /** ApiOptions:PluginTimeoutSeconds (rules/plugin-call.ts); absent or 0: none. */
  readonly pluginTimeoutMs?: number
  /** ApiOptions:EnableLowerCamelCase, as names (model/naming.ts); absent: as declared. */
  readonly publicName?: (declared: string) => string
  /** This database's share of the rows the instance remembers (persistence/row-cache.ts); absent: none. */
  readonly remembered?: RowCacheScope
  /** Told when a connection of the pool breaks while idle or in use (default: not told). */
  readonly onConnectionError?: (error: Error) => void
}

/**
 * Dates, timestamps and intervals stay the text PostgreSQL sends (the unit of work and the
 * serializer pass them on as they are), their arrays arrays of that text.
 */
const TEXT_TYPES = (() => {
  const types = new pg.TypeOverrides()
  const textArray = pg.types.getTypeParser(1009 as Parameters<typeof pg.types.getTypeParser>[0]) // text[]
  for (const oid of [1082, 1114, 1184, 1186]) types.setTypeParser(oid, (text: string) => text)
  for (const oid of [1182, 1115, 1185, 1187]) types.setTypeParser(oid, textArray)
  return types
})()

export async function openTenantDatabase(
  tenant: string,
  url: string,
  model: Model,
  options: TenantDatabaseOptions,
): Promise<TenantDatabase> {
  const startup = ['-c plan_cache_mode=force_generic_plan']
  // Set at connection start, so a bounded statement costs nothing more per request.
  if (options.statementTimeoutMs) startup.push(`-c statement_timeout=${Math.max(1, Math.round(options.statementTimeoutMs))}`)
  const acquireTimeoutMs = Math.round(options.acquireTimeoutMs ?? 0)
  const pool = new pg.Pool({
    connectionString: url,
    types: TEXT_TYPES,
    min: 0,
    max: options.poolSize,
    idleTimeoutMillis: 30_000,
    // Statements are named prepared statements, one per query shape, kept by each connection
    // for its life; recycling a connection after this many uses bounds what it accumulates.
    // Each shape is planned once (generic plan) instead of at every execution: planning the
    // unit of work's statements cost more than running them (0.6 ms vs 0.1 ms for a load).
    // A heavy read that runs long is planned for its values instead (persistence/plan-choice.ts).
    maxUses: 10_000,
    options: startup.join(' '),
    ...(acquireTimeoutMs > 0 ? { connectionTimeoutMillis: acquireTimeoutMs } : {}),
    ...(options.budget ? { Client: budgetedClient(options.budget, acquireTimeoutMs) } : {}),
  })
  // A connection the server drops emits 'error': on the pool while idle, on the client while
  // checked out (pg-pool leaves those to the holder). Unheard, either ends the process; the
  // statement in flight fails on its own and the connection is destroyed on release.
  if (options.budget) underBudget(pool, options.budget, options.poolSize)
  const heard = (error: Error) => options.onConnectionError?.(error)
  pool.on('error', heard)
  pool.on('connect', (client) => client.on('error', heard))
  return {
    tenant,
    url,
    model,
    pool,
    cipher: options.cipher,
    acquireTimeoutMs,
    heavyReads: new HeavyReadLane(options.poolSize - 1),
    plans: new PlanChoice(options.planForValuesAfterMs ?? 0),
    entityTagKey: new EntityTagKey(),
    remembered: options.remembered,
    pluginTimeoutMs: options.pluginTimeoutMs,
    publicName: options.publicName,
    async close() {
      if (!pool.ending) await pool.end()
    },
  }
}
