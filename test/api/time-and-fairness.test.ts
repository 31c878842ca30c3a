// Time and fairness (issue #15) and lost connections (issue #20), against a real server and
// PostgreSQL. A read is made to run as long as the test wants, without timing anything: an
// administrator's transaction holds an ACCESS EXCLUSIVE lock on "Order", so every statement
// reading orders waits in PostgreSQL (visible in pg_stat_activity) until the lock goes.
//
// - a statement over ApiOptions:QueryTimeoutSeconds: 503 QueryTimeout with Retry-After;
// - no free connection within Database:AcquireTimeoutSeconds: 503 with Retry-After;
// - heavy reads never hold the tenant's last connection: a key read still answers;
// - a client that goes away: its statement is cancelled in PostgreSQL;
// - a backend terminated under a request: 503 with Retry-After, then the service recovers;
// - a client that stops reading a streamed answer: cut off after ApiOptions:QueryTimeoutSeconds,
//   its connection and heavy-read slot given back.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import pg from 'pg'
import pino from 'pino'
import { startServer } from '../../server/start.ts'
import { loadConfig } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { translateDatabaseError, isLostConnection } from '../../server/persistence/database-errors.ts'
import { call, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'

const HEAVY_READ = `Orders?$filter=Customer/Orders/any(a:a/Number eq -1)&$count=true&$top=1`

interface Tenant {
  readonly server: TestServer
  readonly token: string
  readonly database: string
  readonly customer: string
  readonly order: string
}

async function openTenant(config: Record<string, Record<string, unknown>>): Promise<Tenant> {
  const server = await startTestServer({ config })
  const token = await server.token()
  const database = loadConfig(server.configPath, {}).Tenants.get(server.tenants[0])!.Database
  const customer = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'Ada' } })
  const order = await call(`${server.api}/Orders`, { method: 'POST', token, body: { Number: 1, 'Customer@odata.bind': `Customers(${customer.body.Guid})` } })
  expect(order.status).toBe(200)
  return { server, token, database, customer: customer.body.Guid, order: order.body.Guid }
}

/** An administrator's connection to the tenant database. */
async function adminClient(tenant: Tenant): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), tenant.database) })
  await client.connect()
  return client
}

/** Holds an ACCESS EXCLUSIVE lock on "Order" until the returned function is called. */
async function lockOrders(tenant: Tenant): Promise<() => Promise<void>> {
  const client = await adminClient(tenant)
  await client.query('begin')
  await client.query('lock table "Order" in access exclusive mode')
  return async () => {
    await client.query('rollback')
    await client.end()
  }
}

/** Backends of the tenant database waiting for a lock (the reads held by lockOrders). */
async function blockedBackends(tenant: Tenant): Promise<number[]> {
  const client = await adminClient(tenant)
  try {
    const { rows } = await client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and state = 'active' and pid <> pg_backend_pid()`,
      [tenant.database],
    )
    return rows.map((row) => row.pid)
  } finally {
    await client.end()
  }
}

/** Backends of the tenant database in a statement that waits for the server to fetch more of it. */
async function portalsWaiting(tenant: Tenant): Promise<number[]> {
  const client = await adminClient(tenant)
  try {
    const { rows } = await client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = $1 and state = 'active' and wait_event = 'ClientRead' and pid <> pg_backend_pid()`,
      [tenant.database],
    )
    return rows.map((row) => row.pid)
  } finally {
    await client.end()
  }
}

/** Polls `probe` until it holds (the event), failing after `withinMs`. */
/** The state of the backend `pid` (pg_stat_activity), undefined once it has ended. */
async function backendState(tenant: Tenant, pid: number): Promise<string | undefined> {
  const client = await adminClient(tenant)
  try {
    const { rows } = await client.query<{ state: string }>('select state from pg_stat_activity where pid = $1', [pid])
    return rows[0]?.state
  } finally {
    await client.end()
  }
}

async function until<T>(probe: () => Promise<T>, holds: (value: T) => boolean, withinMs = 10_000): Promise<T> {
  const deadline = Date.now() + withinMs
  for (;;) {
    const value = await probe()
    if (holds(value)) return value
    if (Date.now() > deadline) throw new Error(`not reached within ${withinMs} ms: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const get = (tenant: Tenant, path: string) => call(`${tenant.server.api}/${path}`, { token: tenant.token })

describe('statement timeout', () => {
  let tenant: Tenant
  beforeAll(async () => {
    tenant = await openTenant({ ApiOptions: { QueryTimeoutSeconds: 0.5 } })
  })
  afterAll(async () => tenant?.server.stop())

  it('cancels a statement past ApiOptions:QueryTimeoutSeconds: 503 QueryTimeout with Retry-After', async () => {
    const unlock = await lockOrders(tenant)
    try {
      const answer = await get(tenant, HEAVY_READ)
      expect(answer.status).toBe(503)
      expect(answer.body.error.code).toBe('QueryTimeout')
      expect(answer.headers.get('retry-after')).toMatch(/^\d+$/)
    } finally {
      await unlock()
    }
    expect((await get(tenant, HEAVY_READ)).status).toBe(200)
  })
})

describe('a pool of two connections', () => {
  let tenant: Tenant
  let unlock: (() => Promise<void>) | undefined
  beforeAll(async () => {
    tenant = await openTenant({ Database: { PoolSizePerTenant: 2, AcquireTimeoutSeconds: 1 }, ApiOptions: { QueryTimeoutSeconds: 60 } })
  })
  afterEach(async () => {
    await unlock?.()
    unlock = undefined
  })
  afterAll(async () => tenant?.server.stop())

  it('keeps a connection for a key read while heavy reads wait; a heavy read past the acquisition timeout is 503', async () => {
    unlock = await lockOrders(tenant)
    const first = get(tenant, HEAVY_READ)
    await until(() => blockedBackends(tenant), (pids) => pids.length === 1)
    // The tenant's only heavy slot is taken: this one waits in its lane, not for the pool.
    const second = get(tenant, HEAVY_READ)
    const key = await get(tenant, `Customers(${tenant.customer})?$select=Name`)
    expect(key.status).toBe(200)
    expect(key.body.Name).toBe('Ada')
    const waited = await second
    expect(waited.status).toBe(503)
    expect(waited.body.error.code).toBe('ServiceUnavailable')
    expect(waited.headers.get('retry-after')).toMatch(/^\d+$/)
    await unlock()
    unlock = undefined
    expect((await first).status).toBe(200)
  })

  it('answers 503 with Retry-After when no connection is free within Database:AcquireTimeoutSeconds, and leaks none', async () => {
    unlock = await lockOrders(tenant)
    // A heavy read and a key read of an order: both connections held, both waiting on the lock.
    const heavy = get(tenant, HEAVY_READ)
    const keyed = get(tenant, `Orders(${tenant.order})`)
    await until(() => blockedBackends(tenant), (pids) => pids.length === 2)
    const refused = await get(tenant, `Customers(${tenant.customer})`)
    expect(refused.status).toBe(503)
    expect(refused.body.error.code).toBe('ServiceUnavailable')
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    await unlock()
    unlock = undefined
    expect((await heavy).status).toBe(200)
    expect((await keyed).status).toBe(200)
    // The refused request gave back nothing it did not take: both connections serve again.
    const again = await Promise.all([get(tenant, `Customers(${tenant.customer})`), get(tenant, HEAVY_READ)])
    expect(again.map((answer) => answer.status)).toEqual([200, 200])
  })

  it('cancels the statement in PostgreSQL when the client goes away', async () => {
    unlock = await lockOrders(tenant)
    const client = new AbortController()
    const request = fetch(`${tenant.server.api}/${HEAVY_READ}`, { headers: { Authorization: `Bearer ${tenant.token}` }, signal: client.signal })
    const [pid] = await until(() => blockedBackends(tenant), (pids) => pids.length === 1)
    client.abort()
    await expect(request).rejects.toThrow()
    // Still locked: the statement can only have stopped because it was cancelled.
    await until(() => blockedBackends(tenant), (pids) => !pids.includes(pid), 5_000)
    await unlock()
    unlock = undefined
    expect((await get(tenant, HEAVY_READ)).status).toBe(200)
  })

  it('answers 503 with Retry-After when the backend is terminated under a request, then recovers', async () => {
    unlock = await lockOrders(tenant)
    const request = get(tenant, HEAVY_READ)
    const [pid] = await until(() => blockedBackends(tenant), (pids) => pids.length === 1)
    const admin = await adminClient(tenant)
    try {
      await admin.query('select pg_terminate_backend($1)', [pid])
      const lost = await request
      expect(lost.status).toBe(503)
      expect(lost.body.error.code).toBe('ServiceUnavailable')
      expect(lost.headers.get('retry-after')).toMatch(/^\d+$/)
      await unlock()
      unlock = undefined
      // Every other connection of the tenant goes too (idle in the pool, the listener's).
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [tenant.database])
    } finally {
      await admin.end()
    }
    // A request may still meet a connection whose loss the pool has not seen yet: that one is
    // a 503 with Retry-After, never a 500, and the connection is not used again.
    const answers: { status: number; retryAfter: string | null }[] = []
    for (let i = 0; i < 8; i++) {
      const answer = await get(tenant, i % 2 ? HEAVY_READ : `Customers(${tenant.customer})`)
      answers.push({ status: answer.status, retryAfter: answer.headers.get('retry-after') })
    }
    for (const answer of answers) {
      expect([200, 503]).toContain(answer.status)
      if (answer.status === 503) expect(answer.retryAfter).toMatch(/^\d+$/)
    }
    expect(answers.slice(-4).map((answer) => answer.status)).toEqual([200, 200, 200, 200])
  })

  it('answers 503 with Retry-After when the backend is terminated under a write, and pools neither connection again', async () => {
    unlock = await lockOrders(tenant)
    const write = call(`${tenant.server.api}/Orders(${tenant.order})`, { method: 'PATCH', token: tenant.token, body: { Number: 2 } })
    const [pid] = await until(() => blockedBackends(tenant), (pids) => pids.length === 1)
    const admin = await adminClient(tenant)
    try {
      await admin.query('select pg_terminate_backend($1)', [pid])
      const lost = await write
      expect(lost.status).toBe(503)
      expect(lost.headers.get('retry-after')).toMatch(/^\d+$/)
    } finally {
      await admin.end()
    }
    await unlock()
    unlock = undefined
    // Two writes at once use both connections of the pool: a broken one given back would fail one.
    const again = await Promise.all([1, 2].map((n) => call(`${tenant.server.api}/Orders(${tenant.order})`, { method: 'PATCH', token: tenant.token, body: { Number: 10 + n } })))
    expect(again.map((answer) => answer.status)).toEqual([204, 204])
  })
})

describe('a client that stops reading a streamed answer', () => {
  let tenant: Tenant
  beforeAll(async () => {
    // One heavy slot; an answer of ~12 MB, more than the sockets on both sides buffer.
    tenant = await openTenant({ Database: { PoolSizePerTenant: 2, AcquireTimeoutSeconds: 1 }, ApiOptions: { QueryTimeoutSeconds: 1, MaxTop: 30_000 } })
    const client = await adminClient(tenant)
    try {
      await client.query(
        `insert into "Customer" ("Guid", "Name", "Email", "City", "_Version")
         select gen_random_uuid(), 'Customer ' || i, repeat('e', 240) || '@example.com', repeat('c', 60), 1 from generate_series(1, 30000) i`,
      )
      // 500 orders for each of 100 customers: a page of 100 (sent as one string) of ~7.5 MB.
      await client.query(
        `insert into "Order" ("Guid", "Number", "Customer_Guid", "Status", "Title", "_Version")
         select gen_random_uuid(), 1000 + row_number() over (), c."Guid", 'Open', repeat('t', 30), 1
         from (select "Guid" from "Customer" where "Name" like 'Customer %' order by "Name" limit 100) c, generate_series(1, 500)`,
      )
    } finally {
      await client.end()
    }
  })
  afterAll(async () => tenant?.server.stop())

  /**
   * A second server of the tenant, logging to `logger`, whose page of 100 customers may take
   * 3 s: on a loaded machine that statement ran past the 1 s of the tenant's server, and its
   * 503 (a few bytes, taken whole by the socket) left nothing to cut off.
   */
  const watchedServer = (logger: pino.Logger) => {
    const configPath = tenant.server.configPath.replace(/\.json$/, '-watched.json')
    const config = JSON.parse(readFileSync(tenant.server.configPath, 'utf8'))
    writeFileSync(configPath, JSON.stringify({ ...config, ApiOptions: { ...config.ApiOptions, QueryTimeoutSeconds: 3 } }))
    return startServer({ configPath, port: 0, logger })
  }

  it('is cut off once it takes nothing for ApiOptions:QueryTimeoutSeconds, giving back its connection and heavy-read slot', async () => {
    // The statement waits on its portal for the client: left to it, it held the tenant's heavy
    // slot (and a connection) for as long as the client kept the connection open, and every
    // other heavy read of the tenant waited out the acquisition timeout, 503.
    const { port, hostname } = new URL(tenant.server.url)
    const stalled = connect(Number(port), hostname)
    stalled.on('error', () => {})
    try {
      stalled.write(`GET /api/Customers?$top=30000&$select=Name,Email,City&$orderby=Name HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.token}\r\n\r\n`)
      stalled.pause()
      // A paused socket never sees its end: the statement, held open for it, is what tells.
      const [pid] = await until(() => portalsWaiting(tenant), (pids) => pids.length === 1)
      // Given back: its backend idle in the pool. (Not merely off the list above: between two
      // batches, while the sockets' buffers still fill, it runs a fetch for a moment.)
      await until(() => backendState(tenant, pid), (state) => state === 'idle' || state === undefined, 5_000)
      const again = await get(tenant, HEAVY_READ)
      expect(again.status, again.text).toBe(200)
    } finally {
      stalled.destroy()
    }
  })

  it('closes the connection of an answer sent whole that its client takes nothing of, for the memory it holds', async () => {
    // A page of up to 128 entities is one string in the socket's buffer: left to it, each
    // client that stopped reading held its answer (up to MaxResponseBytes) for as long as it
    // kept its connection; sixty of them, half a gigabyte.
    let cut: () => void = () => {}
    const cutOff = new Promise<void>((resolve) => (cut = resolve))
    const logger = pino({ level: 'warn' }, { write: (line: string) => (line.includes('the client took nothing') ? cut() : undefined) })
    const watched = await watchedServer(logger)
    const { port, hostname } = new URL(watched.url)
    const stalled = connect(Number(port), hostname)
    stalled.on('error', () => {})
    try {
      const page = `Customers?$top=100&$orderby=Name&$select=Name,Email,City&$expand=Orders($top=500;$select=Number,Title,Status)`
      stalled.write(`GET /api/${page} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.token}\r\n\r\n`)
      stalled.pause()
      await cutOff
      const again = await call(`${watched.url}/api/${page}`, { token: tenant.token })
      expect(again.status).toBe(200)
      expect(again.text.length).toBeGreaterThan(7_000_000)
    } finally {
      stalled.destroy()
      await watched.stop()
    }
  })

  it('runs the requests pipelined on one connection one after the other, so a client that never reads holds one answer', async () => {
    // Node reads pipelined requests a buffer at a time and Koa ran each at once, its answer
    // kept until the ones before it went out: one connection that sent 500 and read nothing
    // piled up answers by the hundred megabytes a second, before any stall could be noticed.
    let cut: () => void = () => {}
    const cutOff = new Promise<void>((resolve) => (cut = resolve))
    const lines: { msg: string; url?: string }[] = []
    const logger = pino({ level: 'info' }, {
      write: (line: string) => {
        lines.push(JSON.parse(line))
        if (line.includes('the client took nothing')) cut()
      },
    })
    const watched = await watchedServer(logger)
    const { port, hostname } = new URL(watched.url)
    const stalled = connect(Number(port), hostname)
    stalled.on('error', () => {})
    try {
      const page = `/api/Customers?$top=100&$orderby=Name&$select=Name,Email,City&$expand=Orders($top=500;$select=Number,Title,Status)`
      stalled.write(`GET ${page} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.token}\r\n\r\n`.repeat(20))
      stalled.pause()
      await cutOff
      const answered = lines.filter((line) => line.msg === 'request' && line.url?.startsWith('/api/Customers'))
      expect(answered).toHaveLength(1)
      // The connection is still served in order when its client reads.
      const again = await call(`${watched.url}${page.replace('$top=100', '$top=1')}`, { token: tenant.token })
      expect(again.status).toBe(200)
    } finally {
      stalled.destroy()
      await watched.stop()
    }
  })
})

describe('a protocol violation the server answers with an error', () => {
  it('leaves the connection usable, and is not a 503 saying the database is unreachable', async () => {
    const client = new pg.Client({ connectionString: testDatabaseUrl() })
    await client.connect()
    try {
      // Two values for a statement of one parameter: the server's ERROR 08P01, a bug of the caller's.
      const failure = await client.query({ name: 'one-parameter', text: 'select $1::int', values: [1, 2] }).catch((error: unknown) => error)
      expect((failure as { code?: string }).code).toBe('08P01')
      expect(isLostConnection(failure)).toBe(false)
      expect(translateDatabaseError(failure)?.status).not.toBe(503)
      expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }])
    } finally {
      await client.end()
    }
  })
})

describe('a connection lost without SQLSTATE', () => {
  it('is a 503 with Retry-After and counts as lost', async () => {
    const client = new pg.Client({ connectionString: testDatabaseUrl() })
    await client.connect()
    // pg reports the loss as 'error' events (the FATAL message, then the closed socket).
    const errored = new Promise((resolve) => client.on('error', resolve))
    const admin = new pg.Client({ connectionString: testDatabaseUrl() })
    await admin.connect()
    await admin.query('select pg_terminate_backend($1)', [(client as unknown as { processID: number }).processID])
    await admin.end()
    await errored
    const failure = await client.query('select 1').catch((error: unknown) => error)
    expect(isLostConnection(failure)).toBe(true)
    const answer = translateDatabaseError(failure)
    expect(answer?.status).toBe(503)
    expect(answer?.headers['Retry-After']).toMatch(/^\d+$/)
    await client.end().catch(() => {})
  })
})
