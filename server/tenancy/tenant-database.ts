// One tenant's database: its MikroORM instance (the schema: migrations compare the model's
// entity schemas with the database) and the pg pool under it, which requests use directly
// (persistence/request-connection.ts) with the pool's heavy-read lane. Opened lazily, closed
// when idle.

import { MikroORM } from '@mikro-orm/postgresql'
import type pg from 'pg'
import type { Model } from '../model/model.ts'
import { entitySchemas } from '../persistence/entity-schemas.ts'
import { ParameterisedPostgreSqlDriver } from '../persistence/parameterised-driver.ts'
import type { PropertyCipher } from './property-encryption.ts'
import { HeavyReadLane } from './heavy-read-lane.ts'

export interface TenantDatabase {
  readonly tenant: string
  readonly url: string
  readonly model: Model
  readonly orm: MikroORM
  readonly pool: pg.Pool
  /** Encrypts and decrypts the properties plugins mark encrypted, with this tenant's key. */
  readonly cipher: PropertyCipher | undefined
  /** How long a request waits for a pooled connection (and a heavy read for its lane); 0: no limit. */
  readonly acquireTimeoutMs: number
  /** Heavy reads share the pool less one connection, which stays for cheap work (heavy-read-lane.ts). */
  readonly heavyReads: HeavyReadLane
  close(): Promise<void>
}

export interface TenantDatabaseOptions {
  readonly poolSize: number
  readonly debug?: boolean
  readonly cipher?: PropertyCipher
  /**
   * statement_timeout of every connection of the pool (0 or absent: none). The server's
   * tenant pools have ApiOptions:QueryTimeoutSeconds; the CLI and migrations open their own.
   */
  readonly statementTimeoutMs?: number
  /** The pool's wait for a connection (pg-pool connectionTimeoutMillis); 0 or absent: none. */
  readonly acquireTimeoutMs?: number
}

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
  const orm = await MikroORM.init({
    driver: ParameterisedPostgreSqlDriver,
    clientUrl: url,
    entities: entitySchemas(model),
    discovery: { warnWhenNoEntities: false },
    pool: { min: 0, max: options.poolSize, idleTimeoutMillis: 30_000 },
    // Statements are named prepared statements, one per query shape, kept by each connection
    // for its life; recycling a connection after this many uses bounds what it accumulates.
    // Each shape is planned once (generic plan) instead of at every execution: planning the
    // unit of work's statements cost more than running them (0.6 ms vs 0.1 ms for a load).
    driverOptions: {
      maxUses: 10_000,
      options: startup.join(' '),
      ...(acquireTimeoutMs > 0 ? { connectionTimeoutMillis: acquireTimeoutMs } : {}),
    },
    debug: options.debug ?? false,
    // Entities are plain data here; MikroORM must not try to validate class instances.
    allowGlobalContext: false,
    forceUtcTimezone: true,
    ensureDatabase: false,
    // Internal tables (_Pat, _Workflow, …) and their triggers belong to their subsystems'
    // DDL (persistence/internal-tables.ts); the schema diff must not touch them.
    schemaGenerator: { skipTables: [/^_/], ignoreTriggers: true },
  })
  const pool = (await orm.em.getConnection().getNativeClient()) as pg.Pool
  return {
    tenant,
    url,
    model,
    orm,
    pool,
    cipher: options.cipher,
    acquireTimeoutMs,
    heavyReads: new HeavyReadLane(options.poolSize - 1),
    async close() {
      await orm.close(true)
      // MikroORM ends the pg pool only when its own query builder has used it; the read
      // path's statements go to the pool directly, so a tenant that only read kept its
      // connections open after close.
      if (!pool.ending) await pool.end()
    },
  }
}
