// A scheduled housekeeping run visits only the tenants that may have something to clean
// (tenant-visits.ts): every tenant at the first run; later, a tenant written since its last
// visit, or holding a row that has fallen due since; never one with nothing to clean, which
// is not even opened. Each run here is another instance of the deployment, as the run lease
// makes it in a cluster: what one visit learnt, the next instance knows.
import { afterAll, beforeAll, expect, it } from 'vitest'
import pg from 'pg'
import pino from 'pino'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { createServices } from '../../server/start.ts'
import { startHousekeeping, type PurgeReport } from '../../server/auth/housekeeping.ts'
import { startWorkflowSweep } from '../../server/workflows/workflow-sweep.ts'
import { deploymentOf } from '../../server/run-lease.ts'
import { adminSql, startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'
import { FIXTURE_PLUGINS } from './helpers.ts'

let server: TestServer
let quiet: string
let busy: string
/** Scheduled times an hour apart, far from any other run of this deployment's leases. */
const base = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000 * 24 * 365
let hour = 0
const nextRun = () => new Date(base + hour++ * 3_600_000)

beforeAll(async () => {
  server = await startTestServer({
    pluginsDir: FIXTURE_PLUGINS,
    tenants: ['quiet', 'busy'],
    // Retention 0: a credential is purged as soon as it expires. The server's own schedule never fires here.
    config: { Housekeeping: { Schedule: '0 0 1 1 *', RetentionDays: 0 } },
  })
  ;[quiet, busy] = server.tenants
  // Statistics gathered now, as autovacuum would later: its statistics are writes too, and one
  // in the middle of a test would make a tenant look written.
  for (const tenant of server.tenants) await onTenant(tenant, 'analyze')
})
afterAll(async () => {
  const config = loadConfig(server.configPath, {})
  const registry = new TenantRegistry(config, await loadModel(FIXTURE_PLUGINS), TEST_DATABASE_URL)
  const deployment = deploymentOf([...config.Tenants.values()].map((tenant) => registry.urlOf(tenant)))
  await registry.close()
  await adminSql(`delete from "entityctl_run_lease" where "Job" like '${deployment}:%'`)
  await adminSql(`delete from "entityctl_tenant_visit" where "Job" like '${deployment}:%'`)
  await server?.stop()
})

/** One statement on the tenant's database, on a connection of its own that ends after it (so its writes are counted at once). */
async function onTenant(tenant: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const config = loadConfig(server.configPath, {})
  const client = new pg.Client({ connectionString: databaseUrl(TEST_DATABASE_URL, config.Tenants.get(tenant)!.Database) })
  await client.connect()
  try {
    return await client.query(sql, params)
  } finally {
    await client.end()
  }
}

function insertPat(tenant: string, expiresAt: string): Promise<pg.QueryResult> {
  return onTenant(
    tenant,
    `insert into "_Pat" ("Id", "UserGuid", "Name", "SecretHash", "ExpirationDays", "ExpiresAt")
     values (gen_random_uuid(), (select "Guid" from "User" where "Username" = 'admin'), 'visits', gen_random_uuid()::text::bytea, 1, ${expiresAt})
     returning "ExpiresAt"::text as "expiresAt"`,
  )
}

/** A scheduled run of housekeeping on a new instance: its reports, and the tenants it opened. */
async function scheduledRun(): Promise<{ reports: PurgeReport[]; opened: string[] }> {
  const config = loadConfig(server.configPath, {})
  const model = await loadModel(FIXTURE_PLUGINS)
  const services = createServices({ config, model, tenants: new TenantRegistry(config, model, TEST_DATABASE_URL), logger: pino({ level: 'silent' }) })
  const housekeeping = startHousekeeping(services)
  try {
    const reports = (await housekeeping.scheduled(nextRun())) ?? []
    return { reports: reports.toSorted((a, b) => a.tenant.localeCompare(b.tenant)), opened: services.tenants.poolUse().map((use) => use.tenant).sort() }
  } finally {
    await housekeeping.stop()
    await services.close()
    await services.tenants.close()
  }
}

const report = (tenant: string, pats = 0): PurgeReport => ({ tenant, pats, refreshTokens: 0, throttles: 0, ran: true })

it('visits every tenant at the first run, then, with nothing written and nothing due, opens none', async () => {
  expect((await scheduledRun()).reports).toEqual([report(busy), report(quiet)].toSorted((a, b) => a.tenant.localeCompare(b.tenant)))
  expect(await scheduledRun()).toEqual({ reports: [], opened: [] })
})

it('visits a tenant written since its last visit, and only that one', async () => {
  await insertPat(busy, `now() - interval '1 hour'`)
  expect(await scheduledRun()).toEqual({ reports: [report(busy, 1)], opened: [busy] })
  // Its purge wrote nothing more (deletes do not make rows due): it is left alone again.
  expect(await scheduledRun()).toEqual({ reports: [], opened: [] })
})

it('visits a tenant again when a row it left there has fallen due, without any write since', async () => {
  const { rows } = await insertPat(quiet, `now() + interval '2 seconds'`)
  // Written: visited, nothing due yet, the expiry remembered.
  expect(await scheduledRun()).toEqual({ reports: [report(quiet)], opened: [quiet] })
  // The event is the database's clock passing the expiry.
  while (!(await onTenant(quiet, 'select now() > $1::timestamptz as passed', [rows[0].expiresAt])).rows[0].passed) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect(await scheduledRun()).toEqual({ reports: [report(quiet, 1)], opened: [quiet] })
})

it('sweeps workflows on the same terms: a tenant with none, unwritten, is not opened', async () => {
  const config = loadConfig(server.configPath, {})
  const model = await loadModel(FIXTURE_PLUGINS)
  const runs: string[][] = []
  for (let run = 0; run < 2; run++) {
    const services = createServices({ config, model, tenants: new TenantRegistry(config, model, TEST_DATABASE_URL), logger: pino({ level: 'silent' }) })
    const sweep = startWorkflowSweep(services)
    try {
      await sweep.scheduled(nextRun())
      runs.push(services.tenants.poolUse().map((use) => use.tenant).sort())
    } finally {
      await sweep.stop()
      await services.close()
      await services.tenants.close()
    }
  }
  expect(runs).toEqual([[busy, quiet].sort(), []])
})
