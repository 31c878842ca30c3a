// decisions.md: 503 when the database is unavailable; never a 500, and the service recovers
// by itself once the database is back.

import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { loadConfig } from '../../server/config/load-config.ts'
import { ADMIN, adminSql, call, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'
import { serveProcess } from '../support/serve-process.ts'

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

it('logs what PostgreSQL said about it: the 503 is a warning with its SQLSTATE and message', async () => {
  const served = await serveProcess(server.configPath)
  try {
    const answer = await call(`${served.api}/auth/signin`, { method: 'POST', body: { TenantId: server.tenants[0], Username: ADMIN.username, Password: ADMIN.password } })
    expect(answer.status).toBe(200)
    const token = answer.body.accessToken
    await adminSql(`alter database "${database}" allow_connections false`)
    await adminSql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}' and pid <> pg_backend_pid()`)
    // A connection the pool still held may fail first, its backend terminated (57P01), before
    // its client has heard so; a new one is refused (55000). Each is logged with its cause.
    const refusedConnection = (entry: Record<string, unknown>) => entry.status === 503 && entry.msg !== 'request' && (entry.cause as { code?: string })?.code === '55000'
    for (let attempt = 0; attempt < 5 && !served.lines.some(refusedConnection); attempt++) {
      const down = await call(`${served.api}/Customers`, { token })
      expect(down.status).toBe(503)
      const logged = await served.line((entry) => entry.status === 503 && entry.msg !== 'request' && entry.requestId === down.headers.get('x-request-id'))
      expect(logged).toMatchObject({ level: 40, code: 'ServiceUnavailable', cause: { code: expect.stringMatching(/^(55000|57P01)$/) } })
    }
    expect(served.lines.find(refusedConnection)).toMatchObject({
      level: 40,
      code: 'ServiceUnavailable',
      cause: { code: '55000', message: `database "${database}" is not currently accepting connections` },
    })
  } finally {
    await adminSql(`alter database "${database}" allow_connections true`)
    await served.stop()
  }
})

it('logs the same for a request of a $batch, naming it', async () => {
  const served = await serveProcess(server.configPath, { ApiOptions__QueryTimeoutSeconds: '1' })
  const locker = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), database) })
  await locker.connect()
  try {
    const token = (await call(`${served.api}/auth/signin`, { method: 'POST', body: { TenantId: server.tenants[0], Username: ADMIN.username, Password: ADMIN.password } })).body.accessToken
    // The read waits for the lock until its statement runs out of time.
    await locker.query('begin')
    await locker.query('lock table "Customer" in access exclusive mode')
    const batch = await call(`${served.api}/$batch`, { method: 'POST', token, body: { requests: [{ id: 'slow', method: 'GET', url: 'Customers' }] } })
    expect(batch.body.responses[0]).toMatchObject({ id: 'slow', status: 503 })
    const logged = await served.line((entry) => entry.part === 'slow')
    expect(logged).toMatchObject({ level: 40, code: 'QueryTimeout', cause: { code: '57014', message: 'canceling statement due to statement timeout' }, msg: 'request refused: the database failed it' })
  } finally {
    await locker.end()
    await served.stop()
  }
})
