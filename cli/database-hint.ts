// A database that cannot be reached, said with the setting to check: a tenant's own
// connection string, the configured server's, or the embedded server's port. The bare
// `connect ECONNREFUSED` of the driver names none of them.

import type { Config } from '../server/config/load-config.ts'
import { CliError } from './cli-error.ts'

/** Errors of a server that cannot be reached or refuses the connection's settings. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', '28P01', '28000', '3D000'])

interface Setting {
  readonly key: string
  readonly url: string
}

/**
 * The CliError for `error` when it says the database cannot be reached; undefined otherwise.
 * `tenants`: the tenants the command used (their own connection strings are suspects first).
 */
export function unreachable(error: unknown, config: Config, tenants: Iterable<string>): CliError | undefined {
  const cause = networkCause(error)
  if (!cause) return undefined
  // By name: importing database-server.ts here would load pg for every command.
  if ((error as Error).name === 'CommandLineDatabaseError') {
    const { option, connection, message } = error as Error & { option: string; connection: string }
    const where = serverOf(connection)
    return new CliError(`Cannot reach the database${where ? ` at ${where}` : ''} (${message}). Check ${option}.`, { code: 'DatabaseUnreachable' })
  }
  const missing = missingTenantDatabase(error, cause.code, config, tenants)
  if (missing) return missing
  const suspects: Setting[] = [...tenants]
    .map((name) => config.Tenants.get(name))
    .filter((tenant) => tenant?.ConnectionString)
    .map((tenant) => ({ key: `Tenants:${tenant!.name}:ConnectionString`, url: tenant!.ConnectionString }))
  suspects.push(
    config.Database.ConnectionString
      ? { key: 'Database:ConnectionString', url: config.Database.ConnectionString }
      : { key: 'Database:EmbeddedPort', url: `postgres://127.0.0.1:${config.Database.EmbeddedPort}` },
  )
  // A connection error names the port it tried: the setting with that port is the one.
  const setting = suspects.find((s) => cause.port !== undefined && portOf(s.url) === cause.port) ?? suspects[0]
  const where = serverOf(setting.url)
  const embedded = setting.key === 'Database:EmbeddedPort' ? ' (the embedded PostgreSQL)' : ''
  const message = (error as Error)?.message || cause.code
  return new CliError(
    `Cannot reach the database${where ? ` at ${where}` : ''} (${message}). Check ${setting.key}${embedded} in ${config.path} (or $${setting.key.replaceAll(':', '__')}).`,
    { code: 'DatabaseUnreachable' },
  )
}

/**
 * A tenant database that does not exist (3D000) on a server that answers: the tenant's
 * Database setting is the one to check, not the server's connection string.
 */
function missingTenantDatabase(error: unknown, code: string, config: Config, tenants: Iterable<string>): CliError | undefined {
  if (code !== '3D000') return undefined
  const database = /database "([^"]+)" does not exist/.exec((error as Error)?.message ?? '')?.[1]
  const tenant = [...tenants].map((name) => config.Tenants.get(name)).find((t) => t && !t.ConnectionString && t.Database === database)
  if (!tenant) return undefined
  const where = serverOf(config.Database.ConnectionString || `postgres://127.0.0.1:${config.Database.EmbeddedPort}`)
  const key = `Tenants:${tenant.name}:Database`
  return new CliError(
    `The database ${database} of tenant '${tenant.name}' does not exist${where ? ` on ${where}` : ''}. Check ${key} in ${config.path} (or $${key.replaceAll(':', '__')}), or restore the tenant from a backup.`,
    { code: 'DatabaseUnreachable' },
  )
}

/** The code (and port, for a socket error) of the error or of what caused it. */
function networkCause(error: unknown): { code: string; port?: number } | undefined {
  const seen = new Set<unknown>()
  let current = error as { code?: unknown; port?: unknown; cause?: unknown; errors?: unknown[] } | undefined
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current)
    if (typeof current.code === 'string') {
      if (!UNREACHABLE.has(current.code)) return undefined
      return { code: current.code, port: typeof current.port === 'number' ? current.port : undefined }
    }
    current = (current.cause ?? current.errors?.[0]) as typeof current
  }
  return undefined
}

function portOf(connectionString: string): number | undefined {
  try {
    return Number(new URL(connectionString).port || 5432)
  } catch {
    return undefined
  }
}

/** host:port of a connection string, without its credentials. */
function serverOf(connectionString: string): string | undefined {
  try {
    const url = new URL(connectionString)
    return `${url.hostname}:${url.port || 5432}`
  } catch {
    return undefined
  }
}
