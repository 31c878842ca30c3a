// Bounded replies (issue 15): a read that could answer with more than MaxResultItems entities
// is refused before any SQL runs; a collection answer longer than a batch is streamed; one over
// MaxResponseBytes is a 400 when nothing was sent yet, a cut-off body once the 200 went out;
// a connection terminated under a request ends that request, not the server. Small limits
// keep it fast: MaxTop 300, MaxResultItems 5000, MaxResponseBytes 60000, rows of ~100 bytes
// (Name) or ~365 (Name, Email) or ~550 (Name, Email, City, Title).

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type pg from 'pg'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { call, onConnection, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'
import { recordStatements, type StatementRecorder } from '../support/statement-recorder.ts'

const CUSTOMERS = 300
const MAX_BYTES = 60_000

let server: TestServer
let token: string
let tenantUrl: string
let database: string
let recorder: StatementRecorder

beforeAll(async () => {
  server = await startTestServer({ config: { ApiOptions: { MaxTop: 300, MaxResultItems: 5000, MaxResponseBytes: MAX_BYTES } } })
  token = await server.token()
  database = server.server.config.Tenants.get(server.tenants[0])!.Database
  tenantUrl = databaseUrl(testDatabaseUrl(), database)
  await withClient(async (client) => {
    // Rows written directly: the service's own first request created the tables.
    await client.query(
      `insert into "Customer" ("Guid", "Name", "Email", "City", "Title", "_Version")
       select gen_random_uuid(), 'Customer ' || lpad(i::text, 4, '0'), repeat('e', 238) || '@example.com', repeat('c', 60), repeat('t', 100), 1
       from generate_series(1, ${CUSTOMERS}) i`,
    )
  })
  recorder = recordStatements(() => database)
})

afterAll(async () => {
  recorder?.restore()
  await server?.stop()
})

const withClient = <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => onConnection(tenantUrl, work)

const get = (path: string) => call(`${server.api}/${path}`, { token })

/** The issue's read, within MaxTop at every level. */
const ISSUE_READ =
  'Customers?$top=300&$select=Name&$expand=Orders($top=300;$select=Number;$expand=Customer($select=Name;' +
  '$expand=Orders($top=110;$select=Number;$expand=Lines($top=300;$select=Quantity;$expand=Order($select=Number)))))'

describe('bounded replies', () => {
  it('refuses a read that could answer with more than MaxResultItems entities, before any SQL runs', async () => {
    const { result, statements } = await recorder.during(() => get(ISSUE_READ))
    expect(result.status, result.text).toBe(400)
    expect(result.body.error.code).toBe('QueryLimitExceeded')
    expect(result.body.error.target).toBe('MaxResultItems')
    // 300 × (1 + 300 × (2 + 110 × (1 + 300 × 2)))
    expect(result.body.error.message).toContain(`MaxResultItems is 5000; this read could answer with up to ${300 * (1 + 300 * (2 + 110 * (1 + 300 * 2)))} entities`)
    // (Signing the caller in reads the access tables; nothing reads the entities.)
    expect(statements.filter((sql) => /"Customer"|"Order"|"OrderLine"/.test(sql))).toEqual([])
  })

  it('allows reads within MaxResultItems: a page with a bounded nested expand', async () => {
    const response = await get('Customers?$top=20&$select=Name&$expand=Orders($top=5;$select=Number;$expand=Lines($top=10;$select=Quantity))')
    expect(response.status, response.text).toBe(200)
    expect(response.body.value).toHaveLength(20)
  })

  it('streams an answer longer than a batch: valid JSON, every entity, in order, with its count', async () => {
    const response = await get('Customers?$top=300&$select=Name&$orderby=Name&$count=true')
    expect(response.status, response.text).toBe(200)
    expect(response.headers.get('transfer-encoding')).toBe('chunked')
    expect(response.body['@odata.count']).toBe(CUSTOMERS)
    expect(response.body.value).toHaveLength(CUSTOMERS)
    expect(response.body.value.map((c: { Name: string }) => c.Name)).toEqual(
      Array.from({ length: CUSTOMERS }, (_, i) => `Customer ${String(i + 1).padStart(4, '0')}`),
    )
  })

  it('answers 400 QueryLimitExceeded when the budget is passed before anything was sent', async () => {
    const response = await get('Customers?$top=300&$select=Name,Email,City,Title&$orderby=Name')
    expect(response.status, response.text).toBe(400)
    expect(response.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'MaxResponseBytes' })
  })

  it('cuts the body off, unterminated, when the budget is passed after the 200 went out', async () => {
    // More times than the tenant has connections (PoolSizePerTenant 4): each one comes back.
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${server.api}/Customers?$top=300&$select=Name,Email&$orderby=Name`, { headers: { Authorization: `Bearer ${token}` } })
      expect(response.status).toBe(200)
      await expect(response.text()).rejects.toThrow()
    }
    // The server serves on.
    expect((await get('Customers?$top=1&$select=Name')).status).toBe(200)
  })

  it('bounds the answers of a $batch together by MaxResponseBytes: the reads past it answer 400 in their place', async () => {
    // Each read within the budget, ten of them far past it: the batch's answer was their sum,
    // 100 page reads of 4.8 MB made one answer of 480 MB and held the event loop for 11 s.
    const read = 'Customers?$top=50&$orderby=Name&$select=Name,Email,City,Title'
    expect((await get(read)).text.length).toBeGreaterThan(MAX_BYTES / 3)
    const requests = Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, method: 'GET', url: read }))
    const answer = await call(`${server.api}/$batch`, { method: 'POST', token, body: { requests } })
    expect(answer.status).toBe(200)
    expect(answer.text.length).toBeLessThan(MAX_BYTES + 10_000)
    const statuses = answer.body.responses.map((response: { status: number }) => response.status)
    expect(statuses.slice(0, 2)).toEqual([200, 200])
    expect(statuses.slice(2)).toEqual(new Array(8).fill(400))
    expect(answer.body.responses[9].body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'MaxResponseBytes' })
  })

  it("counts a $batch's answers in bytes, as a read alone is counted, not in characters", async () => {
    // 100 names of 95 'Ü', two bytes each: a read of them is about 17,000 characters and 26,000
    // bytes, so three fit MaxResponseBytes counted in characters and not in bytes.
    await withClient((client) =>
      client.query(`insert into "Customer" ("Guid", "Name", "_Version") select gen_random_uuid(), repeat('Ü', 95), 1 from generate_series(1, 100)`),
    )
    try {
      const read = `Customers?$top=100&$select=Name&$filter=${encodeURIComponent("startswith(Name,'Ü')")}`
      const alone = await get(read)
      expect(alone.body.value).toHaveLength(100)
      expect(alone.text.length * 3).toBeLessThan(MAX_BYTES)
      expect(Buffer.byteLength(alone.text) * 3).toBeGreaterThan(MAX_BYTES)
      const requests = Array.from({ length: 3 }, (_, i) => ({ id: `u${i}`, method: 'GET', url: read }))
      const answer = await call(`${server.api}/$batch`, { method: 'POST', token, body: { requests } })
      expect(answer.status).toBe(200)
      expect(answer.body.responses.map((response: { status: number }) => response.status)).toEqual([200, 200, 400])
    } finally {
      await withClient((client) => client.query(`delete from "Customer" where "Name" = repeat('Ü', 95)`))
    }
  })

  it('keeps an answer inside a workflow whole (it is stored), within the same budget', async () => {
    const started = await call(`${server.api}/workflow`, { method: 'POST', token })
    const headers = (index: number) => ({ 'Workflow-Id': started.body.workflowId, 'Workflow-Index': String(index) })
    const whole = await call(`${server.api}/Customers?$top=300&$select=Name`, { token, headers: headers(1) })
    expect(whole.status, whole.text).toBe(200)
    expect(whole.headers.get('transfer-encoding')).toBeNull()
    expect(whole.body.value).toHaveLength(CUSTOMERS)
    const over = await call(`${server.api}/Customers?$top=300&$select=Name,Email&$orderby=Name`, { token, headers: headers(2) })
    expect(over.status, over.text).toBe(400)
    expect(over.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'MaxResponseBytes' })
    // The 400 left the workflow as it was; index 1 again is its stored answer, whole.
    const again = await call(`${server.api}/Customers?$top=300&$select=Name`, { token, headers: headers(1) })
    expect(again.status, again.text).toBe(200)
    expect(again.body.value).toHaveLength(CUSTOMERS)
  })

  it('ends the request whose connection PostgreSQL terminated, and serves the next ones', async () => {
    await withClient(async (locker) => {
      await locker.query('begin')
      await locker.query('lock table "Customer" in access exclusive mode')
      const pending = get('Customers?$top=300&$select=Name')
      const pid = await waitForBlockedBackend()
      await locker.query('select pg_terminate_backend($1)', [pid])
      const response = await pending
      expect(response.status).toBeGreaterThanOrEqual(500)
      expect(response.body.error.code).toBeTruthy()
      await locker.query('rollback')
    })
    // Idle pooled connections terminated too: the pool drops them and opens new ones.
    await withClient((admin) => admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()'))
    for (let i = 0; i < 3; i++) {
      const response = await get('Customers?$top=200&$select=Name')
      expect(response.status, response.text).toBe(200)
      expect(response.body.value).toHaveLength(200)
    }
  })
})

/**
 * The backend of this database waiting for a lock (the one the locker holds). Asked on a
 * connection of its own: in the locker's transaction, pg_stat_activity is read once and kept.
 */
function waitForBlockedBackend(): Promise<number> {
  return withClient(async (watcher) => {
    for (;;) {
      const { rows } = await watcher.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)
      if (rows.length) return rows[0].pid
      await watcher.query('select pg_sleep(0.01)')
    }
  })
}
