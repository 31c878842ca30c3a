// decisions.md: 503 when the database is unavailable; never a 500, and the service recovers
// by itself once the database is back.

import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { adminSql, call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let database: string


beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  database = loadConfig(server.configPath, {}).Tenants.get(server.tenants[0])!.Database
})
afterAll(async () => {
  await adminSql(`alter database "${database}" allow_connections true`).catch(() => {})
  await server?.stop()
})

it('answers 503 while the tenant database refuses connections, then recovers', async () => {
  expect((await call(`${server.api}/Customers`, { token })).status).toBe(200)
  await adminSql(`alter database "${database}" allow_connections false`)
  await adminSql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}' and pid <> pg_backend_pid()`)
  const down = await call(`${server.api}/Customers`, { token })
  expect(down.status).toBe(503)
  expect(down.body.error.code).toBe('ServiceUnavailable')
  await adminSql(`alter database "${database}" allow_connections true`)
  let back = await call(`${server.api}/Customers`, { token })
  for (let i = 0; i < 5 && back.status !== 200; i++) back = await call(`${server.api}/Customers`, { token })
  expect(back.status).toBe(200)
})
