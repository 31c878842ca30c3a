// What the auth and CLI tests share: sign-in, Basic headers for PATs, SQL on a tenant's
// database, and the CLI run in-process (main(argv) with --config), output captured.

import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { loadConfig } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { main } from '../../cli/main.ts'
import { announceAccessChange } from '../../server/auth/access-listener.ts'
import { ADMIN, call, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'

export const FIXTURE_PLUGINS = fileURLToPath(new URL('./fixtures/plugins', import.meta.url))
export const FIXTURE_PLUGINS_V2 = fileURLToPath(new URL('./fixtures/plugins-v2', import.meta.url))

export function signIn(server: TestServer, fields: Record<string, unknown>, base = server.api) {
  return call(`${base}/auth/signin`, { method: 'POST', body: fields })
}

export async function tokens(server: TestServer, username = ADMIN.username, password = ADMIN.password, tenant = server.tenants[0]) {
  const response = await signIn(server, { TenantId: tenant, Username: username, Password: password })
  if (response.status !== 200) throw new Error(`sign-in of ${username} failed: ${response.status} ${response.text}`)
  return response.body as { accessToken: string; refreshToken: string; accessTokenExpiresAt: string; refreshTokenExpiresAt: string }
}

export function basic(secret: string): Record<string, string> {
  return { Authorization: `Basic ${Buffer.from(`pat:${secret}`).toString('base64')}` }
}

/** A pool on the tenant's database; end() it after the test file. */
export function tenantPool(server: TestServer, tenant = server.tenants[0], max = 2): pg.Pool {
  const config = loadConfig(server.configPath, {})
  const pool = new pg.Pool({ connectionString: databaseUrl(TEST_DATABASE_URL, config.Tenants.get(tenant)!.Database), max })
  // pg-pool's end() resolves before its connections have closed: the test server's stop, right
  // after, drops the database WITH (FORCE), which may terminate one still closing. Unheard, that
  // error would be an uncaught exception failing the whole run (seen once in CI).
  pool.on('error', () => {})
  return pool
}

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** stdout parsed as JSON (for --json runs). */
  json(): any
}

/** Runs `entityctl --config <file> ...args` in this process. */
export async function cli(configPath: string, ...args: string[]): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const out = process.stdout.write
  const err = process.stderr.write
  process.stdout.write = ((chunk: string) => {
    stdout += chunk
    return true
  }) as typeof process.stdout.write
  process.stderr.write = ((chunk: string) => {
    stderr += chunk
    return true
  }) as typeof process.stderr.write
  let code: number
  try {
    code = await main(['--config', configPath, ...args])
  } finally {
    process.stdout.write = out
    process.stderr.write = err
  }
  return { code, stdout, stderr, json: () => JSON.parse(stdout) }
}

/** Retries until `check` stops throwing: for effects that cross instances by NOTIFY. */
export async function eventually(check: () => Promise<void>, timeoutMs = 2_000): Promise<void> {
  const end = Date.now() + timeoutMs
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() > end) throw error
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
}

/**
 * What a change made by SQL by hand needs to reach the servers' caches at once (otherwise
 * they see it when the cached entry expires): the announcement the CLI makes after its writes.
 */
export async function announced(server: TestServer, tenant = server.tenants[0]): Promise<void> {
  const config = loadConfig(server.configPath, {})
  await announceAccessChange(databaseUrl(TEST_DATABASE_URL, config.Tenants.get(tenant)!.Database))
}
