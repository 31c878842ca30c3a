// The secret ETags are keyed with (server/persistence/entity-tag.ts) is an internal table the
// migration makes: a tenant from a build before it gets it at its next start or `migrate`,
// random and its own, and keeps it through every later migration (an ETag a client holds
// stays valid). A tenant behind is not served without it (serve --no-migrate: 503, the
// schema gate, as any tenant behind).

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { migrateTenant } from '../../server/migrations/migrate-tenant.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import type { Model } from '../../server/model/model.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { DEMO_PLUGINS, onConnection, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'

let server: TestServer
let model: Model

beforeAll(async () => {
  server = await startTestServer({ tenants: ['a', 'b'] })
  model = await loadModel(DEMO_PLUGINS)
})
afterAll(async () => server?.stop())

const urlOf = (tenant: string) => databaseUrl(testDatabaseUrl(), loadConfig(server.configPath, {}).Tenants.get(tenant)!.Database)

const secretOf = (tenant: string) =>
  onConnection(urlOf(tenant), async (client) => (await client.query<{ Secret: string }>(`select "Secret" from "_EntityTagKey"`)).rows.map((row) => row.Secret))

describe('the ETag key', () => {
  it('is made with the tenant: one row, 64 random hex digits, another in every tenant', async () => {
    const [a, b] = await Promise.all(server.tenants.map(secretOf))
    expect(a).toHaveLength(1)
    expect(a[0]).toMatch(/^[0-9a-f]{64}$/)
    expect(b).toHaveLength(1)
    expect(b[0]).not.toBe(a[0])
  })

  it('is added to a tenant from before it at its next start, and kept by every later migration', async () => {
    const tenant = server.tenants[1]
    const url = urlOf(tenant)
    // As a build before the key left the tenant: no table, an older schema version recorded.
    await onConnection(url, (client) => client.query(`drop table "_EntityTagKey"; update "_Migration" set "SchemaVersion" = 'before-the-key'`))
    const started = await migrateTenant(tenant, url, model, { by: 'test', skipWhenCurrent: true })
    expect(started.applied).toBe(true)
    const made = await secretOf(tenant)
    expect(made).toHaveLength(1)
    expect(made[0]).toMatch(/^[0-9a-f]{64}$/)
    await migrateTenant(tenant, url, model, { by: 'test' })
    expect(await secretOf(tenant)).toEqual(made)
  })
})
