// A server that starts while `entityctl tenant move` has a tenant out of service
// (`Tenants:<name>:Moving`) leaves that tenant's database alone: the move is waiting for it to
// have no session, or copying it. When the move puts the tenant back, its first request checks
// its schema and migrates it, as the start would have.

import { readFileSync, writeFileSync } from 'node:fs'
import type pg from 'pg'
import pino from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { recordedSchemaVersion } from '../../server/migrations/migration-journal.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { startServer, type RunningServer } from '../../server/start.ts'
import { adminSql, answeredWith, call, onConnection, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'

const SLOW = 120_000
let first: TestServer
let second: RunningServer | undefined
let moving: string
let database: string

const inDatabase = <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => onConnection(databaseUrl(testDatabaseUrl(), database), work)

function setMoving(value: boolean): void {
  const file = JSON.parse(readFileSync(first.configPath, 'utf8'))
  if (value) file.Tenants[moving].Moving = true
  else delete file.Tenants[moving].Moving
  writeFileSync(first.configPath, JSON.stringify(file, null, 2))
}

const signIn = (api: string, tenant: string) => call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: 'admin', Password: 'admin-password-1' } })

beforeAll(async () => {
  first = await startTestServer({ tenants: ['moving', 'staying'] })
  moving = first.tenants[0]
  database = loadConfig(first.configPath, {}).Tenants.get(moving)!.Database
  await first.server.stop()
}, SLOW)
afterAll(async () => {
  await second?.stop()
  await adminSql(`alter database "${database}" allow_connections true`).catch(() => {})
  await first?.stop()
})

it('a start leaves a tenant being moved alone, and its first request once back checks and migrates it', { timeout: SLOW }, async () => {
  // Behind the plugins, as a tenant is after an upgrade; and, like a database being copied, not to be entered.
  const current = await inDatabase(recordedSchemaVersion)
  await inDatabase((client) => client.query(`insert into "_Migration" ("SchemaVersion", "Statements", "Plugins", "AppliedBy") values ('older', '{}', '[]', 'test')`))
  await adminSql(`alter database "${database}" allow_connections false`)
  setMoving(true)

  second = await startServer({ configPath: first.configPath, port: 0, logger: pino({ level: process.env.TEST_LOG ?? 'silent' }) })
  const api = `${second.url}/api`
  expect((await signIn(api, first.tenants[1])).status).toBe(200)
  const during = await signIn(api, moving)
  expect(during.status, during.text).toBe(503)
  expect(during.body.error.message).toContain('is being moved')
  expect((await call(`${second.url}/readyz`)).body.migrationsPending).toBeUndefined()

  await adminSql(`alter database "${database}" allow_connections true`)
  setMoving(false)
  const back = await answeredWith(200, () => signIn(api, moving))
  expect(back.status, back.text).toBe(200)
  expect(await inDatabase(recordedSchemaVersion)).toBe(current)
  const { rows } = await inDatabase((client) => client.query(`select "AppliedBy" from "_Migration" order by "Id" desc limit 1`))
  expect(rows[0].AppliedBy).toMatch(/ serve /)
})
