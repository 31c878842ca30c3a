// The TenantRegistry keeps many tenants within Database:MaxConnections (issues 8, 20): the
// connections of all tenant pools and the notification connection stay within it, a tenant in
// use is never closed under a request, a connection waits at most AcquireTimeoutSeconds, and a
// closed tenant leaves no connection behind.

import { afterAll, beforeAll, expect, it } from 'vitest'
import pg from 'pg'
import pino from 'pino'
import { loadConfig, type Config } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import type { Model } from '../../server/model/model.ts'
import { createServices } from '../../server/start.ts'
import { translateDatabaseError } from '../../server/persistence/database-errors.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'

let server: TestServer
let config: Config
let model: Model
let monitor: pg.Client

// Two connections for the tenants' pools, one for the notification connection.
const ONE_TENANT = { Database__MaxConnections: '3', Database__PoolSizePerTenant: '2', Database__AcquireTimeoutSeconds: '5' }

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

/** Connections to the tenant's database. */
async function connectionsOf(tenant: string): Promise<{ all: number }> {
  const { rows } = await monitor.query<{ all: number }>(
    `select count(*)::int as all from pg_stat_activity where datname = $1`,
    [config.Tenants.get(tenant)!.Database],
  )
  return rows[0]
}

async function until(holds: () => Promise<boolean>, withinMs = 5_000): Promise<void> {
  const end = Date.now() + withinMs
  while (!(await holds())) {
    if (Date.now() > end) throw new Error('not within the deadline')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const settled = (promise: Promise<unknown>) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 300))])

it('does not close a tenant in use: a connection another tenant needs waits for its release', async () => {
  const registry = new TenantRegistry(config, model, TEST_DATABASE_URL)
  const [a, b] = server.tenants
  try {
    const lease = (await registry.acquire(a))!
    const held = [await lease.database.pool.connect(), await lease.database.pool.connect()]
    // Opening a tenant never waits; its first connection does.
    const leaseB = (await registry.acquire(b))!
    const next = leaseB.database.pool.query('select 1 as one')
    expect(await settled(next)).toBe(false)
    // Idle in the pool of a tenant still held: not taken from it.
    for (const client of held) client.release()
    expect(await settled(next)).toBe(false)
    lease.release()
    expect((await next).rows).toEqual([{ one: 1 }])
    expect(lease.database.pool.ending).toBe(true)
    // The backends go a moment after the client ends them.
    await until(async () => (await connectionsOf(a)).all === 0)
    leaseB.release()
  } finally {
    await registry.close()
  }
  await until(async () => (await connectionsOf(b)).all === 0)
})

it('refuses a connection not free within Database:AcquireTimeoutSeconds with a 503, and leaks no permit', async () => {
  const registry = new TenantRegistry(loadConfig(server.configPath, { ...ONE_TENANT, Database__AcquireTimeoutSeconds: '0.3' }), model, TEST_DATABASE_URL)
  const [a, b] = server.tenants
  try {
    const lease = (await registry.acquire(a))!
    const held = [await lease.database.pool.connect(), await lease.database.pool.connect()]
    const refused = await registry.use(b, (db) => db.pool.query('select 1')).catch((error: unknown) => error)
    expect(translateDatabaseError(refused)?.status).toBe(503)
    expect(registry.connections()).toEqual({ used: 2, bound: 2, waiting: 0 })
    for (const client of held) client.release()
    lease.release()
    expect((await registry.use(b, (db) => db.pool.query('select 1 as one')))?.rows).toEqual([{ one: 1 }])
  } finally {
    await registry.close()
  }
})

it('keeps the tenants\' connections and the one notification connection within MaxConnections', async () => {
  const registry = new TenantRegistry(config, model, TEST_DATABASE_URL)
  const services = createServices({ config, model, tenants: registry, logger: pino({ level: 'silent' }) })
  const [a, b] = server.tenants
  let peak = 0
  try {
    await Promise.all(Array.from({ length: 12 }, (_, i) => registry.use(i % 2 ? a : b, async (db) => {
      const { rows } = await db.pool.query<{ Guid: string }>(`select "Guid" from "User" limit 1`)
      expect(await services.access.forUser(db, rows[0].Guid)).toBeDefined()
      await Promise.all([1, 2].map(() => db.pool.query('select pg_sleep(0.02)')))
      const [ca, cb] = [await connectionsOf(a), await connectionsOf(b)]
      peak = Math.max(peak, ca.all + cb.all)
      expect(registry.connections().used).toBeLessThanOrEqual(2)
    })))
  } finally {
    await services.close()
    await registry.close()
  }
  expect(peak).toBeGreaterThan(0)
  expect(peak).toBeLessThanOrEqual(2)
  await until(async () => (await connectionsOf(a)).all + (await connectionsOf(b)).all === 0)
})
