// Starts a real entityctl server for a test file: its own config file, its own tenant
// databases on the test PostgreSQL (TEST_DATABASE_URL, else the embedded one), port 0.
// stop() shuts the server down and drops the databases, leaving nothing behind.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import pino from 'pino'
import { inject } from 'vitest'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { addTenant } from '../../server/tenancy/tenant-admin.ts'
import { dropDatabase } from '../../server/tenancy/database-server.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { addUser } from '../../server/auth/user-admin.ts'
import { startServer, type RunningServer } from '../../server/start.ts'
import { quoteIdentifier } from '../../server/persistence/sql.ts'

/**
 * The test PostgreSQL: TEST_DATABASE_URL, which test/support/global-setup.ts sets (to the
 * embedded PostgreSQL it starts) when it is unset. Read when needed, not at import time.
 */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL || inject('testDatabaseUrl')
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests with vitest (its globalSetup test/support/global-setup.ts provides one)')
  return url
}

/** The same, read when a test file imports this module (test workers start after globalSetup). Prefer testDatabaseUrl(). */
export const TEST_DATABASE_URL: string = process.env.TEST_DATABASE_URL || (inject('testDatabaseUrl') ?? '')

export interface TestUser {
  readonly username: string
  readonly password: string
  readonly fullAccess?: boolean
}

/** The suite's own copy of the demo plugin (not the project's plugins/ folder, which is the user's). */
export const DEMO_PLUGINS = fileURLToPath(new URL('../fixtures/demo-plugins', import.meta.url))

export interface TestServerOptions {
  /** Tenant names; each gets a database named after the test run. Default: ['t1']. */
  readonly tenants?: readonly string[]
  /** Users created in every tenant. Default: one full-access 'admin'. */
  readonly users?: readonly TestUser[]
  /** Extra config sections merged into the file. */
  readonly config?: Record<string, Record<string, unknown>>
  readonly pluginsDir?: string
  /**
   * Settings of each tenant database (`alter database … set`), in place before the server
   * opens a connection to it: every session the server opens runs with them.
   */
  readonly databaseSettings?: Readonly<Record<string, string>>
}

export interface TestServer {
  readonly url: string
  readonly api: string
  readonly configPath: string
  readonly tenants: readonly string[]
  readonly server: RunningServer
  /** Signs in and returns the access token. */
  token(tenant?: string, username?: string, password?: string): Promise<string>
  stop(): Promise<void>
}

export const ADMIN: TestUser = { username: 'admin', password: 'admin-password-1', fullAccess: true }

/** Runs one statement on the test PostgreSQL as its administrator (ALTER DATABASE, pg_terminate_backend, …). */
export async function adminSql(sql: string): Promise<void> {
  await onConnection(testDatabaseUrl(), (client) => client.query(sql))
}

/** Runs `work` on a connection of its own to `url` (a tenant's database, looked at or changed by hand), closed after. */
export async function onConnection<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Sends `request` until it answers `status` (every 200 ms, at most `withinMs`), as after a
 * tenant comes back: the last answer, for the caller to assert on.
 */
export async function answeredWith<T extends { status: number }>(status: number, request: () => Promise<T>, withinMs = 10_000): Promise<T> {
  const until = Date.now() + withinMs
  let answer = await request()
  while (answer.status !== status && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    answer = await request()
  }
  return answer
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const databaseUrl = testDatabaseUrl()
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-test-'))
  const configPath = join(dir, 'entityctl.json')
  const suffix = randomBytes(4).toString('hex')
  const tenants = (options.tenants ?? ['t1']).map((t) => `${t}-${suffix}`)
  const file = {
    ...options.config,
    Server: { LogLevel: 'silent', PluginsDir: options.pluginsDir ?? DEMO_PLUGINS, ...options.config?.Server },
    Database: { ConnectionString: databaseUrl, ...options.config?.Database },
    JWT: { SigningKey: randomBytes(32).toString('base64url'), ...options.config?.JWT },
  }
  writeFileSync(configPath, JSON.stringify(file))
  let config = loadConfig(configPath, {})
  const model = await loadModel(config.Server.PluginsDir)
  for (const tenant of tenants) {
    await addTenant(config, model, databaseUrl, tenant)
    config = loadConfig(configPath, {})
    const database = config.Tenants.get(tenant)!.Database
    for (const [name, value] of Object.entries(options.databaseSettings ?? {})) {
      await adminSql(`alter database ${quoteIdentifier(database)} set ${quoteIdentifier(name)} = ${quoteLiteral(value)}`)
    }
  }
  const registry = new TenantRegistry(config, model, databaseUrl)
  for (const tenant of tenants) {
    const db = (await registry.get(tenant))!
    for (const user of options.users ?? [ADMIN]) await addUser(db, user.username, user.password, user.fullAccess ?? false)
  }
  await registry.close()

  const server = await startServer({ configPath, port: 0, logger: pino({ level: process.env.TEST_LOG ?? 'silent' }) })
  const api = `${server.url}/api`
  return {
    url: server.url,
    api,
    configPath,
    tenants,
    server,
    async token(tenant = tenants[0], username = ADMIN.username, password = ADMIN.password) {
      const response = await fetch(`${api}/auth/signin`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ TenantId: tenant, Username: username, Password: password }),
      })
      if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`)
      return ((await response.json()) as { accessToken: string }).accessToken
    },
    async stop() {
      await server.stop()
      for (const tenant of tenants) await dropDatabase(databaseUrl, config.Tenants.get(tenant)!.Database)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** fetch with a bearer token and JSON, returning status, headers and parsed body. */
export async function call(
  url: string,
  init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...init.headers }
  if (init.token) headers.Authorization = `Bearer ${init.token}`
  if (init.body !== undefined) headers['Content-Type'] ??= 'application/json'
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  })
  const text = await response.text()
  let body: any
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body, text }
}

/** A string as an SQL literal (test settings only; values come from the test's own code). */
function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}
