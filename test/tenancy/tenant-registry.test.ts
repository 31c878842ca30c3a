// The TenantRegistry keeps many tenants within Database:MaxConnections (issue 8): an open
// tenant counts its pool and its access listener, a tenant in use is never closed under a
// request, and a closed tenant leaves no connection behind.

import { afterAll, beforeAll, expect, it } from 'vitest'
import pg from 'pg'
import pino from 'pino'
import { loadConfig, type Config } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import type { Model } from '../../server/model/model.ts'
import { createServices } from '../../server/start.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'

let server: TestServer
let config: Config
let model: Model
let monitor: pg.Client

// Room for one tenant only: a pool of 2 and its listener.
const ONE_TENANT = { Database__MaxConnections: '3', Database__PoolSizePerTenant: '2' }

beforeAll(async () => {
  server = await startTestServer({ tenants: ['a', 'b'] })
  config = loadConfig(server.configPath, ONE_TENANT)
  model = await loadModel(config.Server.PluginsDir)
  monitor = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await monitor.connect()
})
afterAll(async () => {
  await monitor?.end()
  await server?.stop()
})

/** Connections to the tenant's database, the listener's among them. */
async function connectionsOf(tenant: string): Promise<{ all: number; listeners: number }> {
  const { rows } = await monitor.query<{ all: number; listeners: number }>(
    `select count(*)::int as all, count(*) filter (where application_name = 'entityctl-access-listener')::int as listeners
       from pg_stat_activity where datname = $1`,
    [config.Tenants.get(tenant)!.Database],
  )
  return rows[0]
}

const settled = (promise: Promise<unknown>) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 300))])

it('does not close a tenant in use: the next tenant waits for its release', async () => {
  const registry = new TenantRegistry(config, model, TEST_DATABASE_URL)
  const [a, b] = server.tenants
  try {
    const lease = (await registry.acquire(a))!
    const next = registry.acquire(b)
    expect(await settled(next)).toBe(false)
    // The request holding a still runs its statements.
    expect((await lease.database.pool.query('select 1 as one')).rows).toEqual([{ one: 1 }])
    lease.release()
    const leaseB = (await next)!
    expect(lease.database.pool.ending).toBe(true)
    expect((await connectionsOf(a)).all).toBe(0)
    leaseB.release()
  } finally {
    await registry.close()
  }
  expect((await connectionsOf(b)).all).toBe(0)
})

it('closes the access listener with the tenant, keeping both within MaxConnections', async () => {
  const registry = new TenantRegistry(config, model, TEST_DATABASE_URL)
  const services = createServices({ config, model, tenants: registry, logger: pino({ level: 'silent' }) })
  const [a, b] = server.tenants
  try {
    for (const tenant of [a, b, a]) {
      await registry.use(tenant, async (db) => {
        const { rows } = await db.pool.query<{ Guid: string }>(`select "Guid" from "User" limit 1`)
        expect(await services.access.forUser(db, rows[0].Guid)).toBeDefined()
        await Promise.all([1, 2, 3].map(() => db.pool.query('select pg_sleep(0.05)')))
        const open = await connectionsOf(tenant)
        expect(open.listeners).toBe(1)
        expect(open.all).toBeLessThanOrEqual(3)
      })
      const other = await connectionsOf(tenant === a ? b : a)
      expect(other.all).toBe(0)
    }
  } finally {
    await services.close()
    await registry.close()
  }
})

it('never opens more tenants than fit, however many acquire at once', async () => {
  const registry = new TenantRegistry(config, model, TEST_DATABASE_URL)
  const [a, b] = server.tenants
  let peak = 0
  try {
    await Promise.all(Array.from({ length: 12 }, (_, i) => registry.use(i % 2 ? a : b, async (db) => {
      await db.pool.query('select pg_sleep(0.02)')
      const [ca, cb] = [await connectionsOf(a), await connectionsOf(b)]
      peak = Math.max(peak, ca.all + cb.all)
      expect(ca.all === 0 || cb.all === 0).toBe(true)
    })))
  } finally {
    await registry.close()
  }
  expect(peak).toBeGreaterThan(0)
  expect(peak).toBeLessThanOrEqual(3)
})
