// Live tenants (issue #18): the config file is the source of truth, and running servers follow
// it (server/config/config-watch.ts). With two instances on one PostgreSQL (one in this process,
// one `bin/entityctl serve`) and the real CLI, a tenant added, disabled, enabled and removed
// is seen by both within 2 s of the command's return, without a restart; a disabled or removed
// tenant's requests are refused at once and its connections closed. A key rotated while both
// serve: the CLI waits for both to hold both keys before it re-encrypts (the config change
// announced through PostgreSQL, server/auth/access-listener.ts), so no request of either fails
// during the rotation, and both read the values under the new key when it returns.
//
// The servers run the encryption tests' plugin (a Patient's Diagnosis is encrypted): the demo
// plugin has no encrypted property.

import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import pg from 'pg'
import { databaseUrl, dropDatabase } from '../../server/tenancy/database-server.ts'
import { propertyCipher } from '../../server/tenancy/property-encryption.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'
import { call, startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const SLOW = 120_000
const WITHIN_MS = 2_000
const tenant = `live-${randomBytes(3).toString('hex')}`
const database = `entityctl_${tenant.replaceAll('-', '_')}`
const USER = { Username: 'owner', Password: 'owner-password-1' }

let a: TestServer
let b: ServeProcess
let monitor: pg.Client

function entityctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(root, 'bin/entityctl'), ['--config', a.configPath, ...args], { env: { ...process.env, CI: '1' }, timeout: SLOW }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

beforeAll(async () => {
  a = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins', import.meta.url)) })
  b = await serveProcess(a.configPath)
  monitor = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await monitor.connect()
}, SLOW)
afterAll(async () => {
  await monitor?.end()
  await b?.stop()
  await a?.stop()
  await dropDatabase(TEST_DATABASE_URL, database)
})

const apis = () => [a.api, b.api]

/** Polls each instance until `holds`, within 2 s of now (the command's return); the time it took. */
async function seenByBoth(holds: (api: string) => Promise<boolean>): Promise<number> {
  const start = Date.now()
  for (const api of apis()) {
    while (!(await holds(api))) {
      if (Date.now() - start > WITHIN_MS) throw new Error(`${api} did not see the change within ${WITHIN_MS} ms`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return Date.now() - start
}

const signIn = (api: string) => call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, ...USER } })
const patients = (api: string, token: string) => call(`${api}/Patients`, { token })
async function connectionsToTenant(): Promise<number> {
  const { rows } = await monitor.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [database])
  return rows[0].n
}

it('serves a tenant added, and refuses, closes, serves again and forgets it as it is disabled, enabled and removed', async () => {
  const logged = b.lines.length
  const added = await entityctl('tenant', 'add', tenant)
  expect(added.code, added.stderr).toBe(0)
  // The serve process says so: the event, not a guess at its timing.
  const seenAt = Date.now()
  const change = await Promise.race([
    b.line((entry) => entry.msg === 'tenants changed' && (entry.added as string[]).includes(tenant), logged),
    new Promise((_, reject) => setTimeout(() => reject(new Error('serve did not log the added tenant within 2 s')), WITHIN_MS)),
  ])
  expect(change).toBeDefined()
  expect(Date.now() - seenAt).toBeLessThan(WITHIN_MS)
  const user = await entityctl('user', 'add', '--tenant', tenant, '--username', USER.Username, '--password', USER.Password, '--full-access')
  expect(user.code, user.stderr).toBe(0)
  await seenByBoth(async (api) => (await signIn(api)).status === 200)
  const tokens = new Map<string, string>()
  for (const api of apis()) tokens.set(api, (await signIn(api)).body.accessToken)
  for (const api of apis()) expect((await patients(api, tokens.get(api)!)).status).toBe(200)
  expect(await connectionsToTenant()).toBeGreaterThan(0)

  expect((await entityctl('tenant', 'disable', tenant)).code).toBe(0)
  // The command returns once both have applied it (announced, not left to the file watch).
  for (const api of apis()) expect((await patients(api, tokens.get(api)!)).status).toBe(401)
  await seenByBoth(async (api) => (await signIn(api)).status === 401)
  // Both instances closed its pool.
  await seenByBoth(async () => (await connectionsToTenant()) === 0)
  const listed = await entityctl('tenant', 'list', '--json')
  expect(JSON.parse(listed.stdout)).toContainEqual({ name: tenant, database, state: 'disabled' })

  expect((await entityctl('tenant', 'enable', tenant)).code).toBe(0)
  await seenByBoth(async (api) => (await patients(api, tokens.get(api)!)).status === 200)

  const removed = await entityctl('tenant', 'remove', tenant, '--yes')
  expect(removed.code, removed.stderr).toBe(0)
  await seenByBoth(async (api) => (await patients(api, tokens.get(api)!)).status === 401)
  const { rows } = await monitor.query('select 1 from pg_database where datname = $1', [database])
  expect(rows).toEqual([])
}, SLOW)

it('rotates a key while both serve: no request fails during the rotation, both read the new key when it returns', async () => {
  const rotated = a.tenants[0]
  const tokens = new Map<string, string>()
  for (const api of apis()) {
    const signedIn = await call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: rotated, Username: 'admin', Password: 'admin-password-1' } })
    tokens.set(api, signedIn.body.accessToken)
  }
  // One patient written through each instance, each with an encrypted Diagnosis.
  const expected: string[] = []
  for (const [i, api] of apis().entries()) {
    const diagnosis = `written through instance ${i + 1}`
    const created = await call(`${api}/Patients`, { method: 'POST', token: tokens.get(api)!, body: { Name: `Patient ${i + 1}`, Diagnosis: diagnosis } })
    expect(created.status, created.text).toBe(200)
    expected.push(diagnosis)
  }
  const read = async (api: string) => {
    const response = await call(`${api}/Patients?$orderby=Name&$select=Name,Diagnosis`, { token: tokens.get(api)! })
    return { status: response.status, diagnoses: response.body?.value?.map((p: { Diagnosis: string }) => p.Diagnosis), text: response.text }
  }
  for (const api of apis()) expect((await read(api)).diagnoses).toEqual(expected)
  const oldKey = JSON.parse(readFileSync(a.configPath, 'utf8')).Tenants[rotated].EncryptionKey as string

  // Both instances read in a loop while the CLI rotates: every answer must be the values.
  const failures: string[] = []
  let reads = 0
  let rotating = true
  const polling = (async () => {
    while (rotating) {
      for (const api of apis()) {
        const { status, diagnoses, text } = await read(api)
        reads++
        if (status !== 200 || JSON.stringify(diagnoses) !== JSON.stringify(expected)) failures.push(`${api}: ${status} ${text.slice(0, 200)}`)
      }
    }
  })()
  const logged = b.lines.length
  const result = await entityctl('tenant', 'rotate-key', rotated, '--json').finally(() => (rotating = false))
  await polling
  expect(result.code, result.stderr).toBe(0)
  expect(failures).toEqual([])
  // Reads ran all through the command, not only before or after it.
  expect(reads).toBeGreaterThan(10)
  // Right after the command: both read every value, now stored under the new key only.
  for (const api of apis()) expect(await read(api)).toMatchObject({ status: 200, diagnoses: expected })
  // The serve process applied both config writes (both keys, then the new key alone).
  const keyChange = (entry: Record<string, unknown>) => entry.msg === 'tenants changed' && (entry.changed as string[]).includes(rotated)
  const first = await b.line(keyChange, logged)
  await b.line(keyChange, b.lines.indexOf(first) + 1)

  const settings = JSON.parse(readFileSync(a.configPath, 'utf8')).Tenants[rotated]
  expect(settings.EncryptionKey).not.toBe(oldKey)
  expect(settings.PreviousEncryptionKey).toBeUndefined()
  const client = new pg.Client({ connectionString: databaseUrl(TEST_DATABASE_URL, settings.Database) })
  await client.connect()
  try {
    const stored = [
      (await client.query<{ Canary: string }>('select "Canary" from "_EncryptionCheck" where "Id" = 1')).rows[0].Canary,
      ...(await client.query<{ Diagnosis: string }>('select "Diagnosis" from "Patient"')).rows.map((row) => row.Diagnosis),
    ]
    expect(stored).toHaveLength(3)
    for (const value of stored) {
      expect(() => propertyCipher(rotated, settings.EncryptionKey).decrypt(value)).not.toThrow()
      expect(() => propertyCipher(rotated, oldKey).decrypt(value)).toThrow()
    }
  } finally {
    await client.end()
  }
}, SLOW)
