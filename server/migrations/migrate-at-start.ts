// The migration job of a start (`serve`): every tenant's recorded schema version is read, a
// few tenants at a time, and only the tenants behind the model are migrated, one job per
// cluster at a time (migration-locks.ts). A start on current tenants therefore costs one
// short query per tenant, not a schema comparison. A tenant whose migration is refused (it
// would lose data) or fails on a statement is blocked (schema-gate.ts), and so is one that is
// behind when the start does not migrate (`serve --no-migrate`): it answers 503 while the
// others serve. So is a tenant whose database cannot be reached or entered, or whose
// EncryptionKey is wrong: one tenant's fault must not keep the others out of service after a
// reboot; its requests get 503 naming the cause and try again (at most once a second), and
// once it answers it is migrated and served. Only when no tenant at all could be checked
// does the start stop: then it is the deployment's setting, not a tenant's, and the CLI names
// the setting to check (cli/database-hint.ts).
// A tenant being moved (`Tenants:<name>:Moving`, tenancy/tenant-transfer.ts) is left alone: the
// move waits for its database to have no session and copies it, and when the move puts the
// tenant back, at its new database, its first request checks and migrates it. So is a disabled
// tenant (`tenant disable`): taken out of service, its database may be gone or unreachable, which
// must not stop the start nor log an error; once enabled, its first request checks and migrates it.

import type { Logger } from 'pino'
import pg from 'pg'
import type { Config, TenantConfig } from '../config/load-config.ts'
import type { Model } from '../model/model.ts'
import type { TenantRegistry } from '../tenancy/tenant-registry.ts'
import { verifyEncryptionKey, verifyEncryptionKeyOn } from '../tenancy/tenant-admin.ts'
import { recordedSchemaVersion } from './migration-journal.ts'
import { withClusterLock } from './migration-locks.ts'
import { DestructiveMigrationError, migrateTenant } from './migrate-tenant.ts'
import { SchemaGate, type BlockedTenant } from './schema-gate.ts'
import { schemaVersion } from './schema-version.ts'

/** Tenants whose version is read at the same time: each read is one short connection. */
const CHECK_PARALLEL = 8
/** Tenants migrated at the same time: each boots MikroORM's schema generator, CPU-bound. */
const MIGRATE_PARALLEL = 2
/** A failed migration is tried again on a request at most this often. */
const RETRY_FAILED_MS = 30_000

export interface StartMigrationOptions {
  /** false: `serve --no-migrate`, tenants behind are blocked until `entityctl migrate`. */
  readonly migrate: boolean
}

export async function migrateAtStart(
  config: Config,
  model: Model,
  tenants: TenantRegistry,
  logger: Logger,
  options: StartMigrationOptions,
): Promise<SchemaGate> {
  const version = schemaVersion(model)
  const urlOf = (tenant: TenantConfig) => tenants.urlOf(tenant)
  const lastTry = new Map<string, number>()
  const gate = new SchemaGate(async (blocked: BlockedTenant) => {
    // Its settings now, not at the start: a move has changed its database since.
    const tenant = tenants.tenantConfig(blocked.tenant)
    if (!tenant) return false
    if ((await readVersion(urlOf(tenant))) === version) {
      await verifyEncryptionKey(tenant.name, urlOf(tenant), tenant.EncryptionKey, tenant.PreviousEncryptionKey)
      return true
    }
    if (blocked.kind === 'unchecked' && !options.migrate) {
      blockBehind(tenant)
      return false
    }
    if (!['failed', 'unchecked'].includes(blocked.kind) || !options.migrate || Date.now() - (lastTry.get(tenant.name) ?? 0) < RETRY_FAILED_MS) return false
    lastTry.set(tenant.name, Date.now())
    return (await migrateOne(tenant)) === 'migrated'
  })
  const migrateOne = async (tenant: TenantConfig): Promise<'migrated' | 'blocked'> => {
    try {
      const result = await migrateTenant(tenant.name, urlOf(tenant), model, { skipWhenCurrent: true, by: 'serve' })
      await verifyEncryptionKey(tenant.name, urlOf(tenant), tenant.EncryptionKey, tenant.PreviousEncryptionKey)
      if (result.applied) logger.info({ tenant: tenant.name, statements: result.plan?.statements.length, renames: result.plan?.renames }, 'tenant schema migrated')
      return 'migrated'
    } catch (error) {
      if (error instanceof DestructiveMigrationError) {
        const reason =
          `the plugins' schema would lose data here (${error.plan.losses.join('; ')}), so it was not applied; ` +
          `an administrator must apply it with \`entityctl migrate --allow-data-loss --tenant ${tenant.name}\`.`
        gate.block(tenant.name, 'refused', reason)
        logger.error({ tenant: tenant.name, losses: error.plan.losses }, `tenant ${tenant.name} unavailable: migration refused, it would lose data; see \`entityctl migrate --plan --tenant ${tenant.name}\``)
      } else if (isWrongKey(error) || isUnreachable(error)) {
        blockOut(tenant, error)
      } else {
        gate.block(tenant.name, 'failed', `its schema migration failed (${(error as Error).message}).`)
        logger.error({ tenant: tenant.name, err: error }, `tenant ${tenant.name} unavailable: migration failed`)
      }
      return 'blocked'
    }
  }

  /** A tenant whose database cannot be reached or entered, or whose key is wrong: out of service, told why. */
  const blockOut = (tenant: TenantConfig, error: unknown) => {
    const cause = (error as Error).message
    const reason = isWrongKey(error)
      ? `its EncryptionKey does not open its data (${cause}); check Tenants:${tenant.name}:EncryptionKey.`
      : `its database cannot be reached or entered (${cause}); check Tenants:${tenant.name}:Database, its ConnectionString, and that the database exists.`
    gate.block(tenant.name, 'failed', reason)
    logger.error({ tenant: tenant.name, err: error }, `tenant ${tenant.name} unavailable: ${reason}`)
  }

  const blockBehind = (tenant: TenantConfig) => {
    gate.block(tenant.name, 'behind', `its schema is behind the plugins and this server does not migrate (serve --no-migrate); run \`entityctl migrate\`.`)
    logger.warn({ tenant: tenant.name }, `tenant ${tenant.name} unavailable until migrated: its schema is behind the plugins (serve --no-migrate)`)
  }

  const configured = [...config.Tenants.values()].filter((tenant) => !tenant.Moving && !tenant.Disabled)
  for (const tenant of config.Tenants.values()) {
    if (tenant.Moving) gate.checkLater(tenant.name, 'it was being moved when this server started, and its schema could not be checked since.')
    else if (tenant.Disabled) gate.checkLater(tenant.name, 'it was disabled when this server started, and its schema could not be checked since.')
  }
  const behind: TenantConfig[] = []
  const out = new Map<TenantConfig, unknown>()
  const started = performance.now()
  await inBatches(configured, CHECK_PARALLEL, async (tenant) => {
    try {
      // One connection per current tenant: its version, then its key's canary.
      const current = await onConnection(urlOf(tenant), async (client) => {
        if ((await recordedSchemaVersion(client)) !== version) return false
        await verifyEncryptionKeyOn(client, tenant.name, tenant.EncryptionKey, tenant.PreviousEncryptionKey)
        return true
      })
      if (!current) behind.push(tenant)
    } catch (error) {
      if (!isWrongKey(error) && !isUnreachable(error)) throw error
      out.set(tenant, error)
    }
  })
  // Not one tenant answered: the setting they share is wrong, or the server is down.
  if (out.size > 0 && out.size === configured.length) throw out.values().next().value
  for (const [tenant, error] of out) blockOut(tenant, error)
  logger.info({ tenants: configured.length, behind: behind.length, ms: Math.round(performance.now() - started) }, 'tenant schema versions checked')
  if (behind.length === 0) return gate
  if (!options.migrate) {
    for (const tenant of behind) blockBehind(tenant)
    return gate
  }
  await withClusterLock(
    tenants.serverUrl,
    () => inBatches(behind, MIGRATE_PARALLEL, migrateOne),
    () => logger.info('waiting for another instance\'s migration job to finish'),
  )
  logger.info({ tenants: behind.length, unavailable: gate.blocked().length, ms: Math.round(performance.now() - started) }, 'migration job done')
  return gate
}

function readVersion(url: string): Promise<string | undefined> {
  return onConnection(url, recordedSchemaVersion)
}

async function onConnection<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  // A lost connection fails the statement in flight; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A failure to reach or enter the database (no SQLSTATE, or connection, authorisation, missing
 * database, shutdown) is the deployment's, not this tenant's schema: it stops the start. A
 * statement PostgreSQL refused (a new required column on a table with rows) blocks the tenant.
 */
function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || /^(08|28|3D|57P)/.test(code)
}

function isWrongKey(error: unknown): boolean {
  return error instanceof Error && /EncryptionKey/.test(error.message)
}

/** Runs `work` for every item, at most `parallel` at a time; the first failure is thrown after all settle. */
async function inBatches<T>(items: readonly T[], parallel: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  const failures: unknown[] = []
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]
      await work(item).catch((error) => failures.push(error))
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker))
  if (failures.length > 0) throw failures[0]
}
