// Housekeeping: expired and revoked credentials past Housekeeping:RetentionDays are purged,
// each scheduled run by one instance of the deployment (run-lease.ts), and by one instance at
// a time (advisory lock per tenant database) when run on demand.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import pino from 'pino'
import pg from 'pg'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { createServices, type Services } from '../../server/start.ts'
import { startHousekeeping, type Housekeeping } from '../../server/auth/housekeeping.ts'
import { startWorkflowSweep } from '../../server/workflows/workflow-sweep.ts'
import { adminSql, startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'
import { deploymentOf } from '../../server/run-lease.ts'
import { FIXTURE_PLUGINS, tenantPool, tokens } from './helpers.ts'

let server: TestServer
let services: Services
let housekeeping: Housekeeping
let pool: pg.Pool

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: FIXTURE_PLUGINS })
  const config = loadConfig(server.configPath, {})
  const model = await loadModel(FIXTURE_PLUGINS)
  services = createServices({ config, model, tenants: new TenantRegistry(config, model, TEST_DATABASE_URL), logger: pino({ level: 'silent' }) })
  housekeeping = startHousekeeping(services)
  pool = tenantPool(server)
})
afterAll(async () => {
  await housekeeping?.stop()
  await services?.close()
  await services?.tenants.close()
  await pool?.end()
  await server?.stop()
})

async function seed(): Promise<void> {
  const admin = `(select "Guid" from "User" where "Username" = 'admin')`
  for (const [id, expires, revoked] of [
    ['00000000-0000-7000-8000-000000000001', `now() - interval '10 days'`, 'null'], // expired long ago: purged
    ['00000000-0000-7000-8000-000000000002', `now() - interval '1 day'`, 'null'], // expired within retention: kept
    ['00000000-0000-7000-8000-000000000003', `now() + interval '10 days'`, `now() - interval '8 days'`], // revoked long ago: purged
    ['00000000-0000-7000-8000-000000000004', `now() + interval '10 days'`, 'null'], // active: kept
  ]) {
    await pool.query(
      `insert into "_Pat" ("Id", "UserGuid", "Name", "SecretHash", "ExpirationDays", "ExpiresAt", "RevokedAt")
       values ($1, ${admin}, 'seed', gen_random_uuid()::text::bytea, 30, ${expires}, ${revoked})`,
      [id],
    )
    await pool.query(
      `insert into "_RefreshToken" ("Id", "UserGuid", "FamilyId", "TokenHash", "ExpiresAt", "RevokedAt")
       values ($1, ${admin}, $1, gen_random_uuid()::text::bytea, ${expires}, ${revoked})`,
      [id],
    )
  }
  await pool.query(
    `insert into "_SignInLimit" ("Scope", "Key", "Failures", "Pending", "WindowStart", "LockedUntil")
     values ('user', 'old', 2, 0, now() - interval '1 day', now() - interval '1 hour'), ('user', 'fresh', 2, 0, now(), null)`,
  )
}

it('purges credentials expired or revoked before the retention, and stale throttle rows', async () => {
  await tokens(server) // a live refresh token that must survive
  await seed()
  const [report] = await housekeeping.run()
  expect(report).toEqual({ tenant: server.tenants[0], pats: 2, refreshTokens: 2, throttles: 1, ran: true })
  const { rows: pats } = await pool.query(`select "Id" from "_Pat" order by "Id"`)
  expect(pats.map((p) => p.Id)).toEqual(['00000000-0000-7000-8000-000000000002', '00000000-0000-7000-8000-000000000004'])
  expect((await pool.query(`select count(*)::int as n from "_RefreshToken"`)).rows[0].n).toBe(3)
  // The sign-in above counted too (its user, address and tenant): fresh, kept.
  const { rows: counters } = await pool.query(`select "Key" from "_SignInLimit" where "Scope" = 'user' order by "Key"`)
  expect(counters.map((c) => c.Key)).toEqual(['admin', 'fresh'])
})

it('leaves a tenant to the instance holding its lock', async () => {
  const holder = await pool.connect()
  try {
    await holder.query('select pg_advisory_lock($1)', [0x6563_746c_686b])
    const [report] = await housekeeping.run()
    expect(report.ran).toBe(false)
  } finally {
    await holder.query('select pg_advisory_unlock($1)', [0x6563_746c_686b])
    holder.release()
  }
  expect((await housekeeping.run())[0].ran).toBe(true)
})

it('runs each scheduled run on one of two instances only, whenever each fires and however their clocks differ', async () => {
  const config = loadConfig(server.configPath, {})
  const model = await loadModel(FIXTURE_PLUGINS)
  const other = createServices({ config, model, tenants: new TenantRegistry(config, model, TEST_DATABASE_URL), logger: pino({ level: 'silent' }) })
  const jobs = [
    [housekeeping, startHousekeeping(other)],
    [startWorkflowSweep(services), startWorkflowSweep(other)],
  ] as const
  try {
    // Runs an hour apart from now on, so that no earlier run of this database server is later.
    const base = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000 * 24 * 365
    for (const [a, b] of jobs) {
      let runs = 0
      for (let run = 0; run < 10; run++) {
        const due = new Date(base + run * 3_600_000)
        // Together for even runs; for odd ones B fires after A has finished (a later clock).
        const results = run % 2 === 0 ? await Promise.all([a.scheduled(due), b.scheduled(due)]) : [await a.scheduled(due), await b.scheduled(due)]
        const ran = results.filter((result) => result !== undefined).length
        expect(ran, `run ${run}`).toBe(1)
        runs += ran
        // The same run fired again (a restart, a clock set back) is not run again.
        expect(await b.scheduled(due)).toBeUndefined()
      }
      expect(runs).toBe(10)
    }
  } finally {
    for (const [, b] of jobs) await b.stop()
    await jobs[1][0].stop()
    await other.close()
    await other.tenants.close()
    const deployment = deploymentOf([...config.Tenants.values()].map((tenant) => other.tenants.urlOf(tenant)))
    await adminSql(`delete from "entityctl_run_lease" where "Job" like '${deployment}:%'`)
    await adminSql(`delete from "entityctl_tenant_visit" where "Job" like '${deployment}:%'`)
  }
})

it('still runs each scheduled run on one instance only after a tenant was added while one of them served', async () => {
  const config = loadConfig(server.configPath, {})
  const model = await loadModel(FIXTURE_PLUGINS)
  const instance = (settings: typeof config) =>
    createServices({ config: settings, model, tenants: new TenantRegistry(settings, model, TEST_DATABASE_URL), logger: pino({ level: 'silent' }) })
  // `tenant add`: the instance serving already follows its config file; one started later reads it.
  const [first] = config.Tenants.values()
  const tenants = new Map([...config.Tenants, ['later', { ...first, name: 'later' }]])
  const serving = instance(config)
  await serving.tenants.reload(tenants)
  const started = instance({ ...config, Tenants: tenants })
  const jobs = [startHousekeeping(serving), startHousekeeping(started)]
  try {
    const due = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000 * 24 * 366)
    const results = await Promise.all(jobs.map((job) => job.scheduled(due)))
    expect(results.filter((result) => result !== undefined)).toHaveLength(1)
  } finally {
    for (const job of jobs) await job.stop()
    for (const other of [serving, started]) {
      await other.close()
      await other.tenants.close()
    }
    for (const settings of [config.Tenants, tenants]) {
      const deployment = deploymentOf([...settings.values()].map((tenant) => started.tenants.urlOf(tenant)))
      await adminSql(`delete from "entityctl_run_lease" where "Job" like '${deployment}:%'`)
      await adminSql(`delete from "entityctl_tenant_visit" where "Job" like '${deployment}:%'`)
    }
  }
})

it('forgets the leases and tenant visits of deployment names no run has claimed for a week (the tenant set changed since)', async () => {
  const config = loadConfig(server.configPath, {})
  const deployment = deploymentOf([...config.Tenants.values()].map((tenant) => services.tenants.urlOf(tenant)))
  const hour = Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 3_600_000 * 24 * 367
  const [gone, recent] = ['gone', 'recent'].map((name) => `${name}-${randomBytes(4).toString('hex')}`)
  const rows = async (table: string) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await client.connect()
    try {
      const { rows } = await client.query(`select "Job" from "${table}" where "Job" like $1 or "Job" like $2 order by "Job"`, [`${gone}:%`, `${recent}:%`])
      return rows.map((row) => row.Job)
    } finally {
      await client.end()
    }
  }
  try {
    // A first run makes both tables; then rows of two older names of this deployment.
    await housekeeping.scheduled(new Date(hour))
    await adminSql(
      `insert into "entityctl_run_lease" ("Job", "ScheduledAt", "Holder", "ClaimedAt")
       values ('${gone}:housekeeping', now() - interval '8 days', 'x', now() - interval '8 days'), ('${recent}:housekeeping', now() - interval '1 day', 'x', now() - interval '1 day')`,
    )
    await adminSql(
      `insert into "entityctl_tenant_visit" ("Job", "Tenant", "Fingerprint", "DueAt", "VisitedAt")
       values ('${gone}:housekeeping', 'a', 'f', null, now() - interval '9 days'), ('${gone}:housekeeping', 'b', 'f', null, now() - interval '8 days'),
              ('${recent}:housekeeping', 'a', 'f', null, now() - interval '9 days'), ('${recent}:housekeeping', 'b', 'f', null, now() - interval '1 day')`,
    )
    expect(await housekeeping.scheduled(new Date(hour + 3_600_000))).toBeDefined()
    expect(await rows('entityctl_run_lease')).toEqual([`${recent}:housekeeping`])
    // A job visited within the week keeps all its tenants: one not written since is not visited.
    expect(await rows('entityctl_tenant_visit')).toEqual([`${recent}:housekeeping`, `${recent}:housekeeping`])
  } finally {
    for (const table of ['entityctl_run_lease', 'entityctl_tenant_visit']) {
      await adminSql(`delete from "${table}" where "Job" like '${deployment}:%' or "Job" like '${gone}:%' or "Job" like '${recent}:%'`)
    }
  }
})
