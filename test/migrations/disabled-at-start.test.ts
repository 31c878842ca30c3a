// `entityctl serve` leaves a disabled tenant (`Tenants:<name>:Disabled`, `tenant disable`) alone
// at its start: the operator took it out of service, so its database being unreachable (or its
// schema behind) neither stops the start nor logs an error. `tenant enable` puts it back, and
// its first request then checks its schema and migrates it, as the start would have.

import type pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { recordedSchemaVersion } from '../../server/migrations/migration-journal.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { cli } from '../auth/helpers.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'
import { ADMIN, adminSql, answeredWith, call, onConnection, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'

const SLOW = 120_000
let setup: TestServer
let served: ServeProcess | undefined
let off: string
let on: string
let database: string

const inDatabase = <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => onConnection(databaseUrl(testDatabaseUrl(), database), work)

const signIn = (tenant: string) => call(`${served!.api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password } })

beforeAll(async () => {
  setup = await startTestServer({ tenants: ['off', 'on'] })
  ;[off, on] = setup.tenants
  database = loadConfig(setup.configPath, {}).Tenants.get(off)!.Database
  await setup.server.stop()
}, SLOW)
afterAll(async () => {
  await served?.stop()
  await adminSql(`alter database "${database}" allow_connections true`).catch(() => {})
  await setup?.stop()
})

it('a start leaves a disabled tenant alone, and enabling it checks and migrates it at its first request', { timeout: SLOW }, async () => {
  // Behind the plugins, as after an upgrade, and not to be entered, as a database gone away.
  const current = await inDatabase(recordedSchemaVersion)
  await inDatabase((client) => client.query(`insert into "_Migration" ("SchemaVersion", "Statements", "Plugins", "AppliedBy") values ('older', '{}', '[]', 'test')`))
  await adminSql(`alter database "${database}" allow_connections false`)
  expect((await cli(setup.configPath, 'tenant', 'disable', off)).code).toBe(0)

  served = await serveProcess(setup.configPath)
  expect((await signIn(on)).status).toBe(200)
  expect((await signIn(off)).status).toBe(401)
  expect(served.lines.filter((line) => (line.level as number) >= 40), 'no warning or error for a tenant taken out of service').toEqual([])
  expect((await call(`${served.url}/readyz`)).status).toBe(200)

  await adminSql(`alter database "${database}" allow_connections true`)
  expect((await cli(setup.configPath, 'tenant', 'enable', off)).code).toBe(0)
  const back = await answeredWith(200, () => signIn(off))
  expect(back.status, back.text).toBe(200)
  expect(await inDatabase(recordedSchemaVersion)).toBe(current)
  const { rows } = await inDatabase((client) => client.query(`select "AppliedBy" from "_Migration" order by "Id" desc limit 1`))
  expect(rows[0].AppliedBy).toMatch(/ serve /)
})
