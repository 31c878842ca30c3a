// GET /healthz and /readyz (no credentials; readyz 503 naming the tenants once the database
// server stops answering) and the Prometheus metrics on their own listener (README "Health and
// metrics"). The database server is "stopped" by closing a TCP proxy the second server reaches
// it through: the test PostgreSQL itself is shared and stays up.

import { readFileSync, writeFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { loadConfig } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { startWireProxy, type WireProxy } from '../bench/pg-wire-proxy.ts'
import { sendRaw } from './send-raw.ts'
import { adminSql, call, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'
import { freePort } from '../support/free-port.ts'

/** Asks `probe` again until `done` holds of its answer (readyz keeps an answer for a second). */
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, attempts = 100): Promise<T> {
  let value = await probe()
  for (let i = 0; i < attempts && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    value = await probe()
  }
  return value
}


/** Prometheus' text format: every sample as `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

describe('health and readiness, metrics off (the defaults)', () => {
  let server: TestServer
  let spare: string
  let spareDatabase: string

  beforeAll(async () => {
    server = await startTestServer({ tenants: ['h1', 'h2'] })
    spare = server.tenants[1]
    spareDatabase = loadConfig(server.configPath, {}).Tenants.get(spare)!.Database
  })
  afterAll(async () => {
    await adminSql(`alter database "${spareDatabase}" allow_connections true`).catch(() => {})
    await server?.stop()
  })

  it('GET /healthz answers 200 without credentials', async () => {
    const answer = await call(`${server.url}/healthz`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ status: 'ok' })
  })

  it('answers another method on a probe 405 with Allow, not 404', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const answer = await call(`${server.url}${path}`, { method: 'POST' })
      expect([answer.status, answer.headers.get('allow'), answer.body.error.code]).toEqual([405, 'GET, HEAD', 'MethodNotAllowed'])
    }
  })

  it('GET /readyz answers 200 with nothing unavailable', async () => {
    const answer = await call(`${server.url}/readyz`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ status: 'ready', database: 'up', unavailableTenants: [] })
  })

  it('names a tenant whose database refuses connections, still 200 while the server answers', async () => {
    await adminSql(`alter database "${spareDatabase}" allow_connections false`)
    const degraded = await until(() => call(`${server.url}/readyz`), (answer) => answer.body.unavailableTenants.length > 0)
    expect(degraded.status).toBe(200)
    expect(degraded.body).toEqual({ status: 'ready', database: 'up', unavailableTenants: [spare] })

    await adminSql(`alter database "${spareDatabase}" allow_connections true`)
    const healed = await until(() => call(`${server.url}/readyz`), (answer) => answer.body.unavailableTenants.length === 0)
    expect(healed.body.unavailableTenants).toEqual([])
  })

  it('names a tenant being moved (its requests answer 503) until the move is done, still 200', async () => {
    const setMoving = (moving: boolean) => {
      const file = JSON.parse(readFileSync(server.configPath, 'utf8'))
      if (moving) file.Tenants[spare].Moving = true
      else delete file.Tenants[spare].Moving
      writeFileSync(server.configPath, JSON.stringify(file))
    }
    setMoving(true)
    await server.server.reloadConfig()
    const moving = await until(() => call(`${server.url}/readyz`), (answer) => answer.body.unavailableTenants.length > 0)
    expect([moving.status, moving.body.unavailableTenants]).toEqual([200, [spare]])

    setMoving(false)
    await server.server.reloadConfig()
    const moved = await until(() => call(`${server.url}/readyz`), (answer) => answer.body.unavailableTenants.length === 0)
    expect(moved.body.unavailableTenants).toEqual([])
  })

  it('has no metrics listener unless Server:MetricsPort is set', async () => {
    expect(loadConfig(server.configPath, {}).Server.MetricsPort).toBe(0)
    expect(server.server.metricsUrl).toBeUndefined()
    expect((await call(`${server.url}/metrics`)).status).toBe(404)
  })
})

describe('metrics on their own listener, and readiness when the database server stops', () => {
  let server: TestServer
  let proxy: WireProxy
  let tenant: string

  beforeAll(async () => {
    const upstream = new URL(testDatabaseUrl())
    proxy = await startWireProxy(upstream.hostname, Number(upstream.port || 5432))
    const through = new URL(testDatabaseUrl())
    through.hostname = '127.0.0.1'
    through.port = String(proxy.port)
    server = await startTestServer({
      config: {
        Server: { MetricsPort: await freePort() },
        Database: { ConnectionString: through.toString() },
        SignIn: { MaxFailures: 2 },
      },
    })
    tenant = server.tenants[0]
  })
  afterAll(async () => {
    await server?.stop()
    await proxy?.close()
  })

  it('answers another method on /metrics 405 with Allow, and other paths 404', async () => {
    const metrics = server.server.metricsUrl!
    const posted = await fetch(metrics, { method: 'POST' })
    expect([posted.status, posted.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
    expect((await fetch(new URL('/other', metrics))).status).toBe(404)
  })

  it('counts requests, latency, pools, sign-in failures and throttles, workflows and event-loop lag', async () => {
    const token = await server.token()
    expect((await call(`${server.api}/Customers`, { token })).status).toBe(200)
    expect((await call(`${server.api}/Customers`)).status).toBe(401)
    const wrong = { TenantId: tenant, Username: 'nobody', Password: 'wrong-password' }
    const signIns = []
    for (let i = 0; i < 3; i++) signIns.push((await call(`${server.api}/auth/signin`, { method: 'POST', body: wrong })).status)
    expect(signIns).toEqual([401, 401, 429])
    const workflow = await call(`${server.api}/workflow`, { method: 'POST', token })
    expect(workflow.status).toBe(200)
    const ids = { 'Workflow-Id': workflow.body.workflowId, 'Workflow-Index': '1' }
    expect((await call(`${server.api}/workflow/abort`, { method: 'POST', token, headers: ids })).status).toBe(200)
    const second = await call(`${server.api}/workflow`, { method: 'POST', token })
    const commit = { 'Workflow-Id': second.body.workflowId, 'Workflow-Index': '1' }
    expect((await call(`${server.api}/workflow/commit`, { method: 'POST', token, headers: commit })).status).toBe(200)
    expect((await call(`${server.api}/workflow/commit`, { method: 'POST', token, headers: commit })).status).toBe(200) // a retry, counted once

    expect(server.server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    const scrape = await fetch(server.server.metricsUrl!)
    expect(scrape.status).toBe(200)
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const metrics = samples(await scrape.text())

    expect(metrics.get(`entityctl_http_requests_total{kind="read",status="200",tenant="${tenant}"}`)).toBe(1)
    expect(metrics.get(`entityctl_http_requests_total{kind="read",status="401",tenant=""}`)).toBe(1)
    expect(metrics.get(`entityctl_http_requests_total{kind="signin",status="401",tenant="${tenant}"}`)).toBe(2)
    expect(metrics.get(`entityctl_http_requests_total{kind="signin",status="429",tenant="${tenant}"}`)).toBe(1)
    expect(metrics.get(`entityctl_http_requests_total{kind="workflow",status="200",tenant="${tenant}"}`)).toBe(5)

    const buckets = [...metrics].filter(([name]) => name.startsWith('entityctl_http_request_duration_seconds_bucket{') && name.includes('kind="read"'))
    expect(buckets.length).toBeGreaterThan(5)
    const counts = buckets.map(([, count]) => count)
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    expect(metrics.get('entityctl_http_request_duration_seconds_bucket{le="+Inf",kind="read"}')).toBe(2)
    expect(metrics.get('entityctl_http_request_duration_seconds_count{kind="read"}')).toBe(2)
    expect(metrics.get('entityctl_http_request_duration_seconds_sum{kind="read"}')).toBeGreaterThan(0)

    expect(metrics.get(`entityctl_pool_connections_in_use{tenant="${tenant}"}`)).toBe(0)
    expect(metrics.get(`entityctl_pool_connections_idle{tenant="${tenant}"}`)).toBeGreaterThan(0)
    expect(metrics.get(`entityctl_pool_waiting{tenant="${tenant}"}`)).toBe(0)
    expect(metrics.get(`entityctl_signin_failures_total{tenant="${tenant}"}`)).toBe(2)
    expect(metrics.get(`entityctl_signin_throttled_total{tenant="${tenant}",limit="SignIn:MaxFailures"}`)).toBe(1)
    expect(metrics.get('entityctl_workflows_total{event="created"}')).toBe(2)
    expect(metrics.get('entityctl_workflows_total{event="aborted"}')).toBe(1)
    expect(metrics.get('entityctl_workflows_total{event="committed"}')).toBe(1)
    expect(metrics.get('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0)
    expect(metrics.get('entityctl_remembered_changed_total')).toBe(0)

    // A customer written (its row remembered), changed through the server (taken), then
    // changed behind its back and through it again (found changed, loaded, written).
    const customer = (await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'Remembered' } })).body.Guid
    expect((await call(`${server.api}/Customers(${customer})`, { method: 'PATCH', token, body: { City: 'Berlin' } })).status).toBe(204)
    const database = loadConfig(server.configPath, {}).Tenants.get(tenant)!.Database
    const direct = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), database) })
    await direct.connect()
    await direct.query(`update "Customer" set "City" = 'Hamburg' where "Guid" = $1`, [customer]).finally(() => direct.end())
    expect((await call(`${server.api}/Customers(${customer})`, { method: 'PATCH', token, body: { Country: 'DE' } })).status).toBe(204)
    expect((await call(`${server.api}/Customers(${customer})?$select=City,Country`, { token })).body).toMatchObject({ City: 'Hamburg', Country: 'DE' })
    const after = samples(await (await fetch(server.server.metricsUrl!)).text())
    expect(after.get('entityctl_remembered_rows')).toBeGreaterThan(0)
    expect(after.get('entityctl_remembered_lookups_total{found="true"}')).toBeGreaterThanOrEqual(2)
    expect(after.get('entityctl_remembered_lookups_total{found="false"}')).toBeGreaterThanOrEqual(1) // the second try's
    expect(after.get('entityctl_remembered_changed_total')).toBe(1)

    expect((await fetch(server.server.metricsUrl!.replace(/\/metrics$/, '/other'))).status).toBe(404)
    expect((await call(`${server.url}/metrics`)).status).toBe(404)
  })

  it('counts the requests the HTTP edge refuses before the app sees them, by code', async () => {
    const head = await sendRaw(server.url, { method: 'GET', path: '/api/Customers', headers: { 'X-Big': 'x'.repeat(70_000) } }, 5000)
    expect(head.status).toBe(431)
    const metrics = samples(await (await fetch(server.server.metricsUrl!)).text())
    expect(metrics.get('entityctl_http_refused_total{code="HeadersTooLarge"}')).toBe(1)
  })

  it('GET /readyz answers 503 naming the tenants once the database server stops answering; /healthz stays 200', async () => {
    expect((await call(`${server.url}/readyz`)).status).toBe(200)
    await proxy.close()
    const down = await until(() => call(`${server.url}/readyz`), (answer) => answer.status !== 200)
    expect(down.status).toBe(503)
    expect(down.body).toEqual({ status: 'unavailable', database: 'down', unavailableTenants: [tenant] })
    expect((await call(`${server.url}/healthz`)).status).toBe(200)
  })
})
