// decisions.md: 503 when the database is unavailable; never a 500, and the service recovers
// by itself once the database is back.

import { afterAll, beforeAll, expect, it } from 'vitest'
import pg from 'pg'
import { loadConfig } from '../../server/config/load-config.ts'
import { call, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let database: string

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  database = loadConfig(server.configPath, {}).Tenants.get(server.tenants[0])!.Database
})
afterAll(async () => {
  await admin(`alter database "${database}" allow_connections true`).catch(() => {})
  await server?.stop()
})

it('answers 503 while the tenant database refuses connections, then recovers', async () => {
  expect((await call(`${server.api}/Customers`, { token })).status).toBe(200)
  await admin(`alter database "${database}" allow_connections false`)
  await admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}' and pid <> pg_backend_pid()`)
  const down = await call(`${server.api}/Customers`, { token })
  expect(down.status).toBe(503)
  expect(down.body.error.code).toBe('ServiceUnavailable')
  await admin(`alter database "${database}" allow_connections true`)
  let back = await call(`${server.api}/Customers`, { token })
  for (let i = 0; i < 5 && back.status !== 200; i++) back = await call(`${server.api}/Customers`, { token })
  expect(back.status).toBe(200)
})
