// Migrates one tenant database, holding its migration lock (migration-locks.ts) from the
// version check to the journal entry: plan (schema-plan.ts), refuse a plan that loses data
// unless allowed, apply it with the internal tables in one transaction, synchronise the
// responsibilities, record it (migration-journal.ts). A plan alone (`migrate --plan`) changes
// nothing.

import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import pg from 'pg'
import type { Model } from '../model/model.ts'
import { INTERNAL_TABLES } from '../persistence/internal-tables.ts'
import { syncResponsibilities, type SyncReport } from '../auth/responsibility-sync.ts'
import { openTenantDatabase } from '../tenancy/tenant-database.ts'
import { JOURNAL_TABLE, recordedSchemaVersion, recordMigration } from './migration-journal.ts'
import { lockTenantDatabase } from './migration-locks.ts'
import { markManagedIndexes, planSchema, type SchemaPlan } from './schema-plan.ts'
import { schemaVersion } from './schema-version.ts'

const { version: ENTITYCTL_VERSION } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))

export interface TenantMigration {
  readonly tenant: string
  /** The schema version the model asks for, and the one the database had before. */
  readonly schemaVersion: string
  readonly previousVersion: string | undefined
  /** undefined when the database was current and nothing was planned (skipWhenCurrent). */
  readonly plan?: SchemaPlan
  readonly applied: boolean
  /** What the responsibility sync changed (auth/responsibility-sync.ts). */
  readonly responsibilities?: SyncReport
}

export interface MigrateOptions {
  /** Apply a plan that loses data (`--allow-data-loss`). */
  readonly allowDataLoss?: boolean
  /** Compute the plan and change nothing (`--plan`). */
  readonly planOnly?: boolean
  /** Do nothing when the recorded schema version is the model's (a start). */
  readonly skipWhenCurrent?: boolean
  /** Who applies it, for the journal: `serve`, `migrate`, `tenant add`. */
  readonly by: string
  /** Told when another transaction held a table past the lock timeout and the migration tries again. */
  readonly onLockWait?: (wait: LockWait) => void
}

export interface LockWait {
  /** The table, quoted as in SQL, or undefined when the statement names none. */
  readonly table: string | undefined
  /** The attempt about to start, of LOCK_ATTEMPTS. */
  readonly attempt: number
  readonly attempts: number
}

/**
 * How long one statement of a migration waits for a lock. An ALTER TABLE waiting for a
 * transaction on its table makes every request on that table queue behind it: a few seconds
 * of that, not as long as the other transaction lasts.
 */
const LOCK_TIMEOUT_MS = 3_000
/** Tries of the whole transaction; between them the requests that queued are served. */
const LOCK_ATTEMPTS = 3
const LOCK_RETRY_PAUSE_MS = 1_000
/** SQLSTATE lock_not_available: the lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03'

/** A migration that gave up on a table another transaction held: nothing of it was applied. */
export class MigrationLockedError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MigrationLockedError'
  }
}

export class DestructiveMigrationError extends Error {
  readonly tenant: string
  readonly plan: SchemaPlan
  constructor(tenant: string, plan: SchemaPlan) {
    super(
      `Migration of tenant '${tenant}' would lose data and was not applied:\n  ${plan.losses.join('\n  ')}\n` +
        `Run \`entityctl migrate --plan --tenant ${tenant}\` to see it and \`entityctl migrate --allow-data-loss --tenant ${tenant}\` to apply it anyway.`,
    )
    this.name = 'DestructiveMigrationError'
    this.tenant = tenant
    this.plan = plan
  }
}

export async function migrateTenant(tenant: string, url: string, model: Model, options: MigrateOptions): Promise<TenantMigration> {
  const version = schemaVersion(model)
  const client = new pg.Client({ connectionString: url })
  // A lost connection fails the statement in flight; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    if (!options.planOnly) await lockTenantDatabase(client)
    const previousVersion = await recordedSchemaVersion(client)
    const base = { tenant, schemaVersion: version, previousVersion }
    if (options.skipWhenCurrent && previousVersion === version) return { ...base, applied: false }
    const plan = await planSchema(model, url, client)
    if (options.planOnly) return { ...base, plan, applied: false }
    if (plan.losses.length > 0 && !options.allowDataLoss) throw new DestructiveMigrationError(tenant, plan)
    await applyInOneTransaction(client, tenant, model, [...plan.statements, ...INTERNAL_TABLES, JOURNAL_TABLE], options.onLockWait)
    const responsibilities = await synchronise(tenant, url, model)
    // Recorded last: a sync that failed leaves the version behind, so the next start retries.
    if (previousVersion !== version || plan.statements.length > 0) {
      await recordMigration(client, {
        schemaVersion: version,
        statements: plan.statements,
        renames: plan.renames,
        dataLoss: plan.losses,
        model,
        appliedBy: `entityctl ${ENTITYCTL_VERSION} ${options.by} on ${hostname()} (pid ${process.pid})`,
      })
    }
    return { ...base, plan, applied: true, responsibilities }
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * The statements, the managed indexes' marks, all or nothing: a lock that does not come within
 * LOCK_TIMEOUT_MS rolls everything back, and the whole is tried again, at most LOCK_ATTEMPTS
 * times; then a MigrationLockedError names the table and who holds it.
 */
async function applyInOneTransaction(client: pg.Client, tenant: string, model: Model, statements: readonly string[], onLockWait?: (wait: LockWait) => void): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let current: string | undefined
    await client.query('begin')
    try {
      await client.query(`set local lock_timeout = ${LOCK_TIMEOUT_MS}`)
      for (const statement of statements) {
        current = statement
        await client.query(statement)
      }
      current = undefined
      await markManagedIndexes(client, model)
      await client.query('commit')
      return
    } catch (error) {
      await client.query('rollback').catch(() => {})
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error
      const table = current === undefined ? undefined : tableOf(current)
      if (attempt === LOCK_ATTEMPTS) throw await lockedOut(client, tenant, table)
      onLockWait?.({ table, attempt: attempt + 1, attempts: LOCK_ATTEMPTS })
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_PAUSE_MS))
    }
  }
}

/** The table a migration statement changes, as quoted in it. */
function tableOf(statement: string): string | undefined {
  const table = /^\s*(?:alter table|drop table|create table|comment on (?:table|column)|create (?:unique )?index\b[\s\S]*?\bon)\s+(?:if (?:not )?exists\s+)?(?:only\s+)?("(?:[^"]|"")+"|[\w.]+)/i.exec(statement)
  return table?.[1]
}

async function lockedOut(client: pg.Client, tenant: string, table: string | undefined): Promise<MigrationLockedError> {
  const waited = `the migration waited ${LOCK_TIMEOUT_MS / 1000} s for it ${LOCK_ATTEMPTS} times, requests to it served in between`
  const again = `End that transaction, or let it finish, then run \`entityctl migrate --tenant ${tenant}\` again; nothing of this migration was applied.`
  if (!table) return new MigrationLockedError(`Migration of tenant '${tenant}' was not applied: another transaction holds a lock it needs (${waited}). ${again}`)
  const { rows } = await client
    .query<{ pid: number; application: string; state: string; seconds: number }>(
      `select distinct a.pid, coalesce(nullif(a.application_name, ''), 'a client') as application, a.state,
              coalesce(extract(epoch from now() - a.xact_start), 0)::int as seconds
         from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.relation = to_regclass($1) and l.granted and l.pid <> pg_backend_pid()`,
      [table],
    )
    .catch(() => ({ rows: [] }))
  const holders = rows.map((row) => `pid ${row.pid}, ${row.application}, ${row.state} for ${row.seconds} s`).join('; ')
  return new MigrationLockedError(
    `Migration of tenant '${tenant}' was not applied: table ${table} is held by another transaction${holders ? ` (${holders})` : ''}, and ${waited}. ${again}`,
  )
}

async function synchronise(tenant: string, url: string, model: Model): Promise<SyncReport> {
  const database = await openTenantDatabase(tenant, url, model, { poolSize: 1 })
  try {
    return await syncResponsibilities(database, model)
  } finally {
    await database.close()
  }
}
