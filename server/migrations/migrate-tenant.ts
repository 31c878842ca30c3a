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
    await client.query('begin')
    try {
      for (const statement of [...plan.statements, ...INTERNAL_TABLES, JOURNAL_TABLE]) await client.query(statement)
      await markManagedIndexes(client, model)
      await client.query('commit')
    } catch (error) {
      await client.query('rollback').catch(() => {})
      throw error
    }
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

async function synchronise(tenant: string, url: string, model: Model): Promise<SyncReport> {
  const database = await openTenantDatabase(tenant, url, model, { poolSize: 1 })
  try {
    return await syncResponsibilities(database, model)
  } finally {
    await database.close()
  }
}
