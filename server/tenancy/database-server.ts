// The PostgreSQL server that holds the tenant databases: the configured one, or the
// embedded one started (or reused) for this process.

import pg from 'pg'
import type { Config } from '../config/load-config.ts'
import { projectPath } from '../config/load-config.ts'
import { startEmbeddedPostgres } from '../persistence/embedded-postgres/start-embedded.ts'
import { quoteIdentifier } from '../persistence/sql.ts'

export interface DatabaseServer {
  /** Connection string of the server's maintenance database (`postgres`). */
  readonly url: string
  readonly embedded: boolean
  stop(): Promise<void>
}

export async function openDatabaseServer(config: Config, logger?: { info(msg: string): void; warn(msg: string): void; error(msg: string): void }): Promise<DatabaseServer> {
  if (config.Database.ConnectionString) {
    return { url: config.Database.ConnectionString, embedded: false, stop: async () => {} }
  }
  const embedded = await startEmbeddedPostgres({
    dataDir: projectPath(config.Database.EmbeddedDataDir),
    port: config.Database.EmbeddedPort,
    logger,
  })
  return { url: embedded.connectionString, embedded: true, stop: embedded.stop }
}

/**
 * A database a command names on its command line (`tenant move --to`) that failed to answer:
 * the CLI says which option to check (cli/database-hint.ts), not a setting of the config.
 */
export class CommandLineDatabaseError extends Error {
  readonly option: string
  readonly connection: string
  constructor(option: string, connection: string, cause: unknown) {
    super((cause as Error)?.message ?? String(cause), { cause })
    this.name = 'CommandLineDatabaseError'
    this.option = option
    this.connection = connection
  }
}

/** The connection string without its password, for messages and results. */
export function withoutPassword(connection: string): string {
  try {
    const url = new URL(connection)
    if (url.password) url.password = '***'
    return url.toString()
  } catch {
    return '(a connection string)'
  }
}

/** The same server, another database. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${encodeURIComponent(database)}`
  return url.toString()
}

/**
 * Whether two connection strings name one database: host, port and database name, loopback
 * spellings taken as one. Users and options do not make another database.
 */
export function sameDatabase(a: string, b: string): boolean {
  const where = (connection: string) => {
    if (!URL.canParse(connection)) return connection
    const url = new URL(connection)
    const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1')
    const loopback = host === 'localhost' || host === '::1' || host.startsWith('127.')
    return `${loopback ? 'loopback' : host}:${url.port || 5432}/${decodeURIComponent(url.pathname.slice(1))}`
  }
  return where(a) === where(b)
}

export async function withServerClient<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>, options: { connectTimeoutMs?: number } = {}): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: options.connectTimeoutMs })
  // A lost connection fails the statement in flight; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

export async function databaseExists(serverUrl: string, database: string): Promise<boolean> {
  return withServerClient(serverUrl, async (client) => {
    const result = await client.query('select 1 from pg_database where datname = $1', [database])
    return result.rowCount === 1
  })
}

export async function createDatabase(serverUrl: string, database: string): Promise<void> {
  // Locale C: strings compare and sort by code point, as JavaScript and the benchmark do.
  await withServerClient(serverUrl, (client) =>
    client.query(`create database ${quoteIdentifier(database)} template template0 encoding 'UTF8' lc_collate 'C' lc_ctype 'C'`),
  )
}

export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  await withServerClient(serverUrl, (client) => client.query(`drop database if exists ${quoteIdentifier(database)} with (force)`))
}
