// Tenant lifecycle for the CLI and the server start: add (database + schema + config
// entry), remove, migrate. The config file is the tenant registry (decisions.md "Tenants").

import type { Config } from '../config/load-config.ts'
import { defaultDatabase, readConfigFile, TENANT_NAME, writeConfigFile } from '../config/load-config.ts'
import type { Model } from '../model/model.ts'
import { createDatabase, databaseExists, databaseUrl, dropDatabase, sameDatabase } from './database-server.ts'
import { migrateTenant } from '../migrations/migrate-tenant.ts'
import { propertyCipher } from './property-encryption.ts'
import { newEncryptionKey, rotateEncryptionKey, type RotationReport } from './tenant-keys.ts'
import pg from 'pg'
import type { SyncReport } from '../auth/responsibility-sync.ts'
import { quotedName } from '../model/control-characters.ts'

export class TenantAdminError extends Error {
  /** The command line gave a value that cannot be one (a tenant name, a connection string): a usage error, exit 2. */
  readonly usage: boolean
  constructor(message: string, options: { usage?: boolean } = {}) {
    super(message)
    this.name = 'TenantAdminError'
    this.usage = options.usage ?? false
  }
}

export interface MigrationReport {
  readonly tenant: string
  readonly statements: number
  readonly applied: boolean
  /** What the responsibility sync changed (auth/responsibility-sync.ts). */
  readonly responsibilities?: SyncReport
}

/**
 * Creates the tenant's database on the server (or reuses an existing one: kept data), migrates
 * it and records it in the config file. `encryptionKey`: the key of kept or restored data (a
 * key file's); by default a new one, which existing encrypted data refuses.
 */
export async function addTenant(
  config: Config,
  model: Model,
  serverUrl: string,
  name: string,
  options: { encryptionKey?: string } = {},
): Promise<{ database: string; created: boolean }> {
  if (!TENANT_NAME.test(name)) {
    throw new TenantAdminError(`${quotedName(name)} is not a valid tenant name: lower-case letters, digits, - and _, starting with a letter, at most 40.`)
  }
  if (config.Tenants.has(name)) throw new TenantAdminError(`Tenant ${quotedName(name)} already exists.`)
  const database = defaultDatabase(name)
  refuseDatabaseInUse(config, serverUrl, name, database)
  const created = !(await databaseExists(serverUrl, database))
  if (created) await createDatabase(serverUrl, database)
  await migrateDatabase(name, databaseUrl(serverUrl, database), model, false, 'tenant add')
  const file = readConfigFile(config.path)
  const EncryptionKey = options.encryptionKey ?? newEncryptionKey()
  await verifyEncryptionKey(name, databaseUrl(serverUrl, database), EncryptionKey).catch((error) => {
    if (error instanceof TenantAdminError && !options.encryptionKey) {
      throw new TenantAdminError(`${error.message.replace(/; restore the right key\.$/, '')}: database ${database} holds data of an earlier tenant. Give its key with --encryption-key-file FILE (the file \`tenant remove --export-key\` wrote).`)
    }
    throw error
  })
  file.Tenants = { ...(file.Tenants ?? {}), [name]: { Database: database, EncryptionKey } }
  await writeConfigFile(config.path, file)
  return { database, created }
}

/**
 * `announce` is awaited after the config write: for running instances to let go of the tenant
 * before its database is dropped. A database another tenant uses is kept: `sharedWith` names them.
 */
export async function removeTenant(
  config: Config,
  serverUrl: string,
  name: string,
  keepDatabase: boolean,
  options: { announce?: () => Promise<void> } = {},
): Promise<{ sharedWith: string[] }> {
  const tenant = config.Tenants.get(name)
  if (!tenant) throw new TenantAdminError(`No tenant ${quotedName(name)}; \`entityctl tenant list\` shows them.`)
  const sharedWith = tenantsUsing(config, serverUrl, tenant.ConnectionString || databaseUrl(serverUrl, tenant.Database)).filter((other) => other !== name)
  const file = readConfigFile(config.path)
  if (file.Tenants) delete file.Tenants[name]
  // First out of the config, so that running servers refuse the tenant and close its pool
  // (config-watch.ts) rather than see its connections cut by the drop.
  await writeConfigFile(config.path, file)
  await options.announce?.()
  if (!keepDatabase && !tenant.ConnectionString && sharedWith.length === 0) await dropDatabase(serverUrl, tenant.Database)
  return { sharedWith }
}

/**
 * `x-y` and `x_y` map to one database name; two tenants on one database would read each
 * other's data, and removing either would drop the other's. So a new tenant (added or
 * restored) is refused a database a configured tenant uses.
 */
export function refuseDatabaseInUse(config: Config, serverUrl: string, name: string, database: string): void {
  const [holder] = tenantsUsing(config, serverUrl, databaseUrl(serverUrl, database))
  if (!holder) return
  const why = holder !== name && holder.replaceAll('-', '_') === name.replaceAll('-', '_') ? ' (- and _ give the same database name)' : ''
  throw new TenantAdminError(`Database ${database} holds data of tenant '${holder}', which uses it: a tenant needs a database of its own. Choose another name${why}.`)
}

/** The configured tenants whose database is the one `url` names. */
function tenantsUsing(config: Config, serverUrl: string, url: string): string[] {
  return [...config.Tenants.values()]
    .filter((tenant) => sameDatabase(tenant.ConnectionString || databaseUrl(serverUrl, tenant.Database), url))
    .map((tenant) => tenant.name)
}

/** Migrates the tenant's database (migrations/migrate-tenant.ts), refusing a change that loses data unless allowed. */
export async function migrateDatabase(tenant: string, url: string, model: Model, allowDataLoss: boolean, by = 'migrate'): Promise<MigrationReport> {
  const result = await migrateTenant(tenant, url, model, { allowDataLoss, by })
  return { tenant, statements: result.plan?.statements.length ?? 0, applied: result.applied, responsibilities: result.responsibilities }
}

/**
 * The first start of a tenant stores a value encrypted with its key; every later start
 * decrypts it, so a changed or wrong EncryptionKey stops the start before any request
 * could read an encrypted property with it.
 */
export async function verifyEncryptionKey(tenant: string, url: string, key: string, previousKey?: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  // A lost connection fails the statement in flight; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    await verifyEncryptionKeyOn(client, tenant, key, previousKey)
  } finally {
    await client.end()
  }
}

/** The same on a connection the caller holds (a start checks a tenant's schema version on it too). */
export async function verifyEncryptionKeyOn(client: pg.Client, tenant: string, key: string, previousKey?: string): Promise<void> {
  const cipher = propertyCipher(tenant, key, previousKey)
  await client.query(`insert into "_EncryptionCheck" ("Id", "Canary") values (1, $1) on conflict ("Id") do nothing`, [cipher.encrypt('entityctl')])
  const { rows } = await client.query<{ Canary: string }>(`select "Canary" from "_EncryptionCheck" where "Id" = 1`)
  try {
    cipher.decrypt(rows[0].Canary)
  } catch {
    throw new TenantAdminError(`Tenants:${tenant}:EncryptionKey is not the key this tenant's data was encrypted with; restore the right key.`)
  }
}

/**
 * `tenant rotate-key`: a new EncryptionKey for the tenant, every encrypted value re-encrypted
 * under it in one transaction (tenant-keys.ts). A running server needs nothing but to reload
 * the tenant's keys from the config file when it changes: `announce` is awaited after each of
 * the two config writes, for the instances to have done so (without it, an instance that has
 * not yet reloaded the first write when the re-encryption commits refuses the re-encrypted
 * values until its file watch catches up: cli/config-announce.ts).
 */
export async function rotateTenantKey(
  config: Config,
  model: Model,
  serverUrl: string,
  name: string,
  options: { announce?: () => Promise<void>; progress?: (text: string) => void } = {},
): Promise<RotationReport> {
  const tenant = config.Tenants.get(name)
  if (!tenant) throw new TenantAdminError(`No tenant ${quotedName(name)}; \`entityctl tenant list\` shows them.`)
  const url = tenant.ConnectionString || databaseUrl(serverUrl, tenant.Database)
  await verifyEncryptionKey(name, url, tenant.EncryptionKey, tenant.PreviousEncryptionKey)
  return rotateEncryptionKey(config, model, url, tenant, options)
}
