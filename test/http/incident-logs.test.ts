// What an operator sees of an incident in the log, the metrics and nothing else (README
// "Health and metrics", "Running it as a service"): whom it hit (the tenant), at what level,
// and counted under the status that says what happened. A real `entityctl serve` process on
// the test PostgreSQL, its stdout read as JSON lines, its metrics scraped from their port.

import pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { ADMIN, adminSql, call, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'
import { freePort } from '../support/free-port.ts'

const HEAVY_READ = "Customers?$filter=Name ne 'x'"

let server: TestServer
let served: ServeProcess
let metricsUrl: string
let tenant: string
let database: string
let token: string
let locker: pg.Client | undefined

/** Prometheus' text format: every sample as `name{labels}` → value. */
async function scrape(): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (const line of (await (await fetch(metricsUrl)).text()).split('\n')) {
    if (!line || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, attempts = 100): Promise<T> {
  let value = await probe()
  for (let i = 0; i < attempts && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    value = await probe()
  }
  return value
}

/** Holds an exclusive lock on Customer until released: reads of it wait. */
async function lockCustomers(): Promise<void> {
  locker = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), database) })
  await locker.connect()
  await locker.query('begin')
  await locker.query('lock table "Customer" in access exclusive mode')
}

async function blockedBackends(): Promise<number> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() })
  await client.connect()
  try {
    const { rows } = await client.query(`select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`, [database])
    return rows[0].n
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  server = await startTestServer()
  tenant = server.tenants[0]
  database = loadConfig(server.configPath, {}).Tenants.get(tenant)!.Database
  const port = await freePort()
  served = await serveProcess(server.configPath, {
    Server__MetricsPort: String(port),
    Database__PoolSizePerTenant: '2',
    Database__AcquireTimeoutSeconds: '1',
  })
  metricsUrl = `http://127.0.0.1:${port}/metrics`
  const answer = await call(`${served.api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password } })
  token = answer.body.accessToken
})
afterEach(async () => {
  await locker?.end().catch(() => {})
  locker = undefined
  await adminSql(`alter database "${database}" allow_connections true`)
})
afterAll(async () => {
  await served?.stop()
  await server?.stop()
})

it('names the signed-in tenant on the request line and in the metrics when its database is down', async () => {
  await adminSql(`alter database "${database}" allow_connections false`)
  await adminSql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}' and pid <> pg_backend_pid()`)
  const down = await call(`${served.api}/Customers`, { token, headers: { 'X-Request-Id': 'tenant-down' } })
  expect(down.status).toBe(503)
  const line = await served.line((entry) => entry.requestId === 'tenant-down' && entry.msg === 'request')
  expect(line).toMatchObject({ status: 503, tenant })
  const metrics = await scrape()
  expect(metrics.get(`entityctl_http_requests_total{kind="read",status="503",tenant="${tenant}"}`)).toBeGreaterThanOrEqual(1)
  expect(metrics.get('entityctl_http_requests_total{kind="read",status="503",tenant=""}')).toBeUndefined()
})

it('logs a client that went away as info, status 499, not as a database failure', async () => {
  await lockCustomers()
  const client = new AbortController()
  const request = fetch(`${served.api}/Customers`, { headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'client-left' }, signal: client.signal })
  await until(blockedBackends, (n) => n === 1)
  client.abort()
  await expect(request).rejects.toThrow()
  const line = await served.line((entry) => entry.requestId === 'client-left' && entry.msg === 'request')
  expect(line).toMatchObject({ level: 30, status: 499, tenant })
  const said = served.lines.filter((entry) => entry.requestId === 'client-left' && entry.msg !== 'request')
  expect(said).toEqual([expect.objectContaining({ level: 30, msg: 'request abandoned: the client closed its connection before the answer' })])
  const metrics = await scrape()
  expect(metrics.get(`entityctl_http_requests_total{kind="read",status="499",tenant="${tenant}"}`)).toBe(1)
  expect(metrics.get(`entityctl_http_requests_total{kind="read",status="503",tenant="${tenant}"}`) ?? 0).toBeLessThanOrEqual(1)
})

it('counts heavy reads waiting for their lane as waiting, and warns when they give up on a connection', async () => {
  await lockCustomers()
  // A pool of 2: one heavy slot, taken by the first; the others wait in the lane.
  const reads = [1, 2, 3].map((i) => call(`${served.api}/${HEAVY_READ}`, { token, headers: { 'X-Request-Id': `lane-${i}` } }))
  await until(blockedBackends, (n) => n === 1)
  const waiting = await until(scrape, (metrics) => metrics.get(`entityctl_pool_waiting{tenant="${tenant}"}`) === 2, 20)
  expect(waiting.get(`entityctl_pool_waiting{tenant="${tenant}"}`)).toBe(2)
  const answers = await Promise.all(reads.slice(1))
  expect(answers.map((answer) => answer.status)).toEqual([503, 503])
  const refused = await served.line((entry) => entry.requestId === 'lane-2' && entry.msg !== 'request')
  expect(refused).toMatchObject({ level: 40, status: 503, code: 'ServiceUnavailable' })
  await locker!.query('rollback')
  expect((await reads[0]).status).toBe(200)
})

it('names the tenant of a sign-in it serves, refused or throttled, but no guessed one', async () => {
  const wrong = { TenantId: tenant, Username: 'nobody-here', Password: 'wrong-password' }
  const statuses = []
  for (let i = 0; i < 6; i++) statuses.push((await call(`${served.api}/auth/signin`, { method: 'POST', body: wrong, headers: { 'X-Request-Id': `wrong-${i}` } })).status)
  expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
  expect(await served.line((entry) => entry.requestId === 'wrong-0' && entry.msg === 'request')).toMatchObject({ status: 401, tenant })
  expect(await served.line((entry) => entry.requestId === 'wrong-5' && entry.msg === 'request')).toMatchObject({ status: 429, tenant })
  // The line saying why tells the limit that refused it.
  expect(await served.line((entry) => entry.requestId === 'wrong-5' && entry.msg === 'request refused')).toMatchObject({ status: 429, code: 'TooManyRequests', target: 'SignIn:MaxFailures', tenant })
  const guessed = { TenantId: 'no-such-tenant', Username: 'nobody-here', Password: 'wrong-password' }
  expect((await call(`${served.api}/auth/signin`, { method: 'POST', body: guessed, headers: { 'X-Request-Id': 'guessed' } })).status).toBe(401)
  const line = await served.line((entry) => entry.requestId === 'guessed' && entry.msg === 'request')
  expect(line.tenant).toBeUndefined()
  const metrics = await scrape()
  expect(metrics.get(`entityctl_http_requests_total{kind="signin",status="429",tenant="${tenant}"}`)).toBe(1)
  expect(metrics.get('entityctl_http_requests_total{kind="signin",status="401",tenant=""}')).toBe(1)
  expect([...metrics.keys()].some((name) => name.includes('no-such-tenant'))).toBe(false)
})

it('says which requests the shutdown cut, at warn, not that their clients left', async () => {
  const stopping = await serveProcess(server.configPath, { Server__ShutdownTimeoutSeconds: '1' })
  try {
    const signedIn = (await call(`${stopping.api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password } })).body.accessToken
    await lockCustomers()
    const request = fetch(`${stopping.api}/Customers`, { headers: { Authorization: `Bearer ${signedIn}`, 'X-Request-Id': 'cut-by-shutdown' } }).catch((error: Error) => error)
    await until(blockedBackends, (n) => n === 1)
    expect(await stopping.stop()).toBe(0)
    expect(await request).toBeInstanceOf(Error)
    const said = stopping.lines.filter((entry) => entry.requestId === 'cut-by-shutdown')
    expect(said).toEqual([
      expect.objectContaining({ level: 40, status: 503, msg: 'request cut: still running when the shutdown ended it after Server:ShutdownTimeoutSeconds' }),
      expect.objectContaining({ level: 30, status: 503, tenant, msg: 'request' }),
    ])
  } finally {
    await stopping.stop()
  }
})

it('names the user on the request line and on the line saying why it was refused', async () => {
  const missing = await call(`${served.api}/Customers(00000000-0000-0000-0000-000000000001)`, { token, headers: { 'X-Request-Id': 'who-asked' } })
  expect(missing.status).toBe(404)
  const lines = await Promise.all([
    served.line((entry) => entry.requestId === 'who-asked' && entry.msg === 'request refused'),
    served.line((entry) => entry.requestId === 'who-asked' && entry.msg === 'request'),
  ])
  for (const line of lines) expect(line).toMatchObject({ tenant, user: ADMIN.username })
})

it('counts the connections of all tenants against Database:MaxConnections, and the requests waiting for room', { timeout: 60_000 }, async () => {
  const crowded = await startTestServer({
    tenants: ['busy', 'idle'],
    // The idle tenant's request waits for room until the lock is released, however long the
    // machine takes to show it waiting: the acquire timeout is far beyond the wait for the gauge.
    config: { Server: { MetricsPort: await freePort() }, Database: { MaxConnections: 3, PoolSizePerTenant: 2, AcquireTimeoutSeconds: 45 } },
  })
  const [busy, idle] = crowded.tenants
  const busyDatabase = loadConfig(crowded.configPath, {}).Tenants.get(busy)!.Database
  const holder = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), busyDatabase) })
  await holder.connect()
  const read = async () => {
    const metrics = new Map<string, number>()
    for (const line of (await (await fetch(crowded.server.metricsUrl!)).text()).split('\n')) {
      if (line && !line.startsWith('#')) metrics.set(line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1)))
    }
    return metrics
  }
  try {
    const [busyToken, idleToken] = [await crowded.token(busy), await crowded.token(idle)]
    await holder.query('begin')
    await holder.query('lock table "Customer" in access exclusive mode')
    // Both connections the server may have (3, less its notification connection) held by the busy tenant.
    const held = [call(`${crowded.api}/${HEAVY_READ}`, { token: busyToken }), call(`${crowded.api}/Customers`, { token: busyToken })]
    const blocked = async () => {
      const client = new pg.Client({ connectionString: testDatabaseUrl() })
      await client.connect()
      const { rows } = await client.query(`select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`, [busyDatabase]).finally(() => client.end())
      return rows[0].n as number
    }
    await until(blocked, (n) => n === 2)
    const waiting = call(`${crowded.api}/Customers`, { token: idleToken })
    const seen = await until(read, (metrics) => metrics.get('entityctl_database_connections_waiting') === 1, 600)
    expect(seen.get('entityctl_database_connections_waiting')).toBe(1)
    expect(seen.get('entityctl_database_connections')).toBe(2)
    expect(seen.get('entityctl_database_connections_max')).toBe(2)
    await holder.query('rollback')
    expect((await Promise.all([...held, waiting])).map((answer) => answer.status)).toEqual([200, 200, 200])
    expect((await read()).get('entityctl_database_connections_waiting')).toBe(0)
  } finally {
    await holder.end()
    await crowded.stop()
  }
})
