// Everything the runner assumes about entityctl's command line, configuration and sign-in, in one
// place so it can follow the product as it changes. Assumed (the CLI is being written alongside):
//   bin/entityctl tenant add bench --json          → JSON naming the tenant's database
//   bin/entityctl user add --tenant bench --username bench --password <p> --full-access
//   bin/entityctl serve --port <p>
// configured by ENTITYCTL_CONFIG (a JSON file: server/config/schema.ts) and environment overrides
// (Database__ConnectionString: the PostgreSQL server of the tenant databases;
// Database__PoolSizePerTenant: the same pool size as the floor's, for a like-for-like comparison);
// sign-in is POST /api/auth/signin {TenantId, Username, Password}.
// ENTITYCTL_BIN overrides the path of bin/entityctl (another build, or a stand-in for testing).
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { dropDatabase } from './databases.ts'
import { httpRequest } from './http-request.ts'
import { startServer } from './server-process.ts'
import type { ServerProcess } from './server-process.ts'

export type EntityctlSetup = {
  repoRoot: string
  workDir: string
  /** PostgreSQL server URL (any database): where entityctl keeps its tenant databases. */
  serverUrl: string
  tenant: string
  username: string
  password: string
  /** Server:PluginsDir; undefined: entityctl's default (the project's plugins/). */
  pluginsDir?: string
  /** Database:PoolSizePerTenant; undefined: entityctl's default. */
  poolSize: number | undefined
  /** Database:MaxConnections; undefined: entityctl's default. */
  maxConnections?: number
  /** Database:TenantIdleSeconds (an idle tenant's pool is closed); undefined: entityctl's default. */
  tenantIdleSeconds?: number
}

export const ENTITYCTL_API_ROOT = '/api/'

const run = promisify(execFile)
const configPath = (setup: EntityctlSetup) => join(setup.workDir, 'entityctl.json')
const tenantRecordPath = (setup: EntityctlSetup) => join(setup.workDir, 'entityctl-tenant.json')

function environment(setup: EntityctlSetup, connectionString: string): Record<string, string> {
  return {
    ENTITYCTL_CONFIG: configPath(setup),
    Database__ConnectionString: connectionString,
    ...(setup.poolSize !== undefined ? { Database__PoolSizePerTenant: String(setup.poolSize) } : {}),
    ...(setup.maxConnections !== undefined ? { Database__MaxConnections: String(setup.maxConnections) } : {}),
    ...(setup.tenantIdleSeconds !== undefined ? { Database__TenantIdleSeconds: String(setup.tenantIdleSeconds) } : {}),
  }
}

const binPath = (setup: EntityctlSetup) => process.env.ENTITYCTL_BIN ?? join(setup.repoRoot, 'bin', 'entityctl')

async function entityctl(setup: EntityctlSetup, args: string[]): Promise<string> {
  const bin = binPath(setup)
  try {
    const { stdout } = await run(bin, args, {
      cwd: setup.repoRoot, env: { ...process.env, ...environment(setup, setup.serverUrl) },
    })
    return stdout
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string }
    throw new Error(`entityctl ${args.join(' ')} failed: ${(stderr || stdout || String(error)).trim().slice(0, 2000)}`)
  }
}

/**
 * A fresh configuration, a fresh tenant (its database migrated by `tenant add`) and a user with
 * full access. The database of the previous run's tenant is dropped first: the configuration
 * that registered it is overwritten here.
 * Returns the tenant's database name, for the loader.
 */
export async function prepareEntityctl(setup: EntityctlSetup): Promise<string> {
  // `tenant add` names the database entityctl_<tenant> (README, Tenants:<name>:Database); one
  // that a run from another clone or with --keep-databases left is dropped as well, since its
  // data was encrypted with that run's key.
  const leftovers = new Set([previousTenantDatabase(setup), `entityctl_${setup.tenant.replaceAll('-', '_')}`])
  for (const database of leftovers) if (database) await dropDatabase(setup.serverUrl, database)
  writeFileSync(configPath(setup), JSON.stringify(configuration(setup), null, 2))
  const addTenant = async () =>
    JSON.parse(await entityctl(setup, ['tenant', 'add', setup.tenant, '--json'])) as Record<string, unknown>
  let added = await addTenant()
  if (added.created === false) {
    // A database an interrupted run left behind was reused: start again from an empty one.
    await entityctl(setup, ['tenant', 'remove', setup.tenant, '--yes'])
    added = await addTenant()
  }
  const database = tenantDatabase(added)
  writeFileSync(tenantRecordPath(setup), JSON.stringify({ tenant: setup.tenant, database }))
  await entityctl(setup, [
    'user', 'add', '--tenant', setup.tenant, '--username', setup.username, '--password', setup.password, '--full-access',
  ])
  return database
}

/** Another user of the tenant, without roles (and so without access to any entity). */
export async function addPlainUser(setup: EntityctlSetup, username: string, password: string): Promise<void> {
  await entityctl(setup, ['user', 'add', '--tenant', setup.tenant, '--username', username, '--password', password])
}

/** The configuration's JWT signing key (the soak forges tokens with it). */
export function signingKeyOf(setup: EntityctlSetup): string {
  return (JSON.parse(readFileSync(configPath(setup), 'utf8')) as { JWT: { SigningKey: string } }).JWT.SigningKey
}

export function previousTenantDatabase(setup: EntityctlSetup): string | undefined {
  if (!existsSync(tenantRecordPath(setup))) return undefined
  return (JSON.parse(readFileSync(tenantRecordPath(setup), 'utf8')) as { database?: string }).database
}

export type RecordedTenant = { name: string; database: string; encryptionKey: string }

/**
 * Adds tenants whose databases the runner made itself (copies of one `tenant add` made) to the
 * configuration, as `tenant add` would: each with its database and its own EncryptionKey.
 */
export function recordTenants(setup: EntityctlSetup, tenants: RecordedTenant[]): void {
  const file = JSON.parse(readFileSync(configPath(setup), 'utf8')) as { Tenants?: Record<string, unknown> }
  file.Tenants = { ...file.Tenants }
  for (const tenant of tenants) file.Tenants[tenant.name] = { Database: tenant.database, EncryptionKey: tenant.encryptionKey }
  writeFileSync(configPath(setup), JSON.stringify(file, null, 2))
}

/** A fresh EncryptionKey, as `tenant add` makes them: 32 random bytes, base64. */
export const newEncryptionKey = () => randomBytes(32).toString('base64')

function configuration(setup: EntityctlSetup): Record<string, unknown> {
  // `tenant add` writes the tenant (database name, encryption key) into this file.
  return {
    ...(setup.pluginsDir !== undefined ? { Server: { PluginsDir: setup.pluginsDir } } : {}),
    Database: { ConnectionString: setup.serverUrl },
    JWT: { SigningKey: randomBytes(32).toString('base64url') },
  }
}

/** The database name in `tenant add --json` output, under whichever name the CLI settles on. */
function tenantDatabase(added: Record<string, unknown>): string {
  for (const key of ['database', 'Database', 'databaseName', 'DatabaseName']) {
    if (typeof added[key] === 'string') return added[key]
  }
  for (const key of ['connectionString', 'ConnectionString']) {
    if (typeof added[key] === 'string') return decodeURIComponent(new URL(added[key]).pathname.slice(1))
  }
  throw new Error(`entityctl tenant add --json: no database name in ${JSON.stringify(added)}`)
}

/**
 * `bin/entityctl serve` connected to PostgreSQL through `connectionString` (direct or counted).
 * The start migrates every tenant: many tenants need a longer `timeoutMs`.
 */
export function startEntityctl(setup: EntityctlSetup, connectionString: string, port: number, timeoutMs = 60_000): Promise<ServerProcess> {
  return startServer({
    command: binPath(setup),
    args: ['serve', '--port', String(port)],
    env: environment(setup, connectionString),
    cwd: setup.repoRoot,
    port,
    logFile: join(setup.workDir, 'entityctl.log'),
    readyPath: `${ENTITYCTL_API_ROOT}$metadata`,
    timeoutMs,
  })
}

/** A Bearer token for the bench user (signed in again before each load, so it cannot expire). */
export async function signIn(origin: string, setup: EntityctlSetup, username = setup.username, password = setup.password): Promise<string> {
  const body = JSON.stringify({ TenantId: setup.tenant, Username: username, Password: password })
  const answer = await httpRequest(origin, 'POST', `${ENTITYCTL_API_ROOT}auth/signin`, {}, body)
  if (answer.status !== 200) throw new Error(`sign-in to entityctl: status ${answer.status}: ${answer.text.slice(0, 300)}`)
  return (JSON.parse(answer.text) as { accessToken: string }).accessToken
}
