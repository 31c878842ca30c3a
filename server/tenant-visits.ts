// Which tenants a scheduled run of a cleaning job (housekeeping, the workflow sweep) visits:
// only those that may have something for it to clean, known without opening the others, so
// that a run does not open every tenant's database and push busy tenants out of the
// connection budget (tenancy/connection-budget.ts).
//
// Each visit records, per job and tenant, in the postgres database of the configured server
// (beside the run lease, run-lease.ts, where every instance finds it):
//   - DueAt: when the first row the job left behind falls due (null: it left none), read by
//     the visit after its purge;
//   - Fingerprint: the tenant database's count of rows written (inserted or updated), read
//     from pg_stat_database before the visit. That view covers every database of a server,
//     so one connection to its maintenance database reads the counts of all its tenants.
// A later run skips a tenant whose count has not moved and whose DueAt has not come. Why that
// loses nothing: a row the job would purge was either there when the visit looked, and then
// it falls due no earlier than DueAt, or written (or changed) after the count was read, and
// then it moved the count. Rows are only made due by writes; time alone only brings DueAt.
// The counts are PostgreSQL's statistics: a backend reports its writes when it goes idle,
// within seconds (at most a minute when busy), so a row written just before a run may be
// purged one run later than it could have been; a reset of the statistics changes
// stats_reset, which is part of the fingerprint; where track_counts is off there is no count
// and every tenant is visited. A visit that did not finish records nothing: the next run
// visits the tenant again. Extra visits (autovacuum's statistics are writes too) are harmless.
//
//   const visits = await planVisits(tenants, `${deployment}:housekeeping`)
//   for (const tenant of visits.due) visits.visited(tenant, await purge(tenant))
//   await visits.record()

import { FORGOTTEN_AFTER } from './run-lease.ts'
import { databaseUrl, withServerClient } from './tenancy/database-server.ts'
import type { TenantRegistry } from './tenancy/tenant-registry.ts'

export interface TenantVisits {
  /** The tenants to visit, in the configuration's order. */
  readonly due: readonly string[]
  /**
   * Notes a visit done: `next` is when the first row it left falls due, as PostgreSQL's
   * timestamptz text (null: none left). A tenant not noted is visited again next run.
   */
  visited(tenant: string, next: string | null): void
  /** Stores the visits noted, and forgets tenants no longer configured and jobs long not run. */
  record(): Promise<void>
}

/** The tenants to visit: every configured one (`every`, a run on demand) or those described above. */
export async function planVisits(tenants: TenantRegistry, job: string, options: { every?: boolean } = {}): Promise<TenantVisits> {
  const configured = [...tenants.configured()].map(([name, settings]) => ({ name, url: new URL(tenants.urlOf(settings)) }))
  const fingerprints = await readFingerprints(configured)
  const stateServer = databaseUrl(tenants.serverUrl, 'postgres')
  const recorded = await withServerClient(stateServer, async (client) => {
    await ensureTable(client)
    const { rows } = await client.query<{ Tenant: string; Fingerprint: string; due: boolean }>(
      `select "Tenant", "Fingerprint", coalesce("DueAt" <= now(), false) as due from "entityctl_tenant_visit" where "Job" = $1`,
      [job],
    )
    return new Map(rows.map((row) => [row.Tenant, row]))
  })
  const due = configured
    .map(({ name }) => name)
    .filter((name) => {
      if (options.every) return true
      const fingerprint = fingerprints.get(name)
      const last = recorded.get(name)
      return fingerprint === undefined || last === undefined || last.Fingerprint !== fingerprint || last.due
    })
  const visits = new Map<string, string | null>()
  return {
    due,
    visited(tenant, next) {
      visits.set(tenant, next)
    },
    async record() {
      const noted = [...visits].filter(([tenant]) => fingerprints.has(tenant))
      await withServerClient(stateServer, async (client) => {
        await client.query(
          `insert into "entityctl_tenant_visit" ("Job", "Tenant", "Fingerprint", "DueAt", "VisitedAt")
           select $1, tenant, fingerprint, due::timestamptz, now()
             from unnest($2::text[], $3::text[], $4::text[]) as visit(tenant, fingerprint, due)
           on conflict ("Job", "Tenant") do update
             set "Fingerprint" = excluded."Fingerprint", "DueAt" = excluded."DueAt", "VisitedAt" = excluded."VisitedAt"`,
          [job, noted.map(([tenant]) => tenant), noted.map(([tenant]) => fingerprints.get(tenant)), noted.map(([, next]) => next)],
        )
        // This job's tenants no longer configured, and the jobs no run has visited for long (a
        // deployment's old name, run-lease.ts FORGOTTEN_AFTER).
        await client.query(
          `delete from "entityctl_tenant_visit"
            where ("Job" = $1 and not ("Tenant" = any($2::text[])))
               or "Job" in (select "Job" from "entityctl_tenant_visit" where "Job" <> $1 group by "Job" having max("VisitedAt") < now() - $3::interval)`,
          [job, configured.map(({ name }) => name), FORGOTTEN_AFTER],
        )
      })
    },
  }
}

/**
 * Tenant → its database's fingerprint, read on each database server the tenants live on; a
 * tenant whose server does not count writes, or could not be asked, has none.
 */
async function readFingerprints(configured: readonly { name: string; url: URL }[]): Promise<Map<string, string>> {
  const byServer = new Map<string, { name: string; database: string }[]>()
  for (const { name, url } of configured) {
    const server = databaseUrl(url.toString(), 'postgres')
    const database = decodeURIComponent(url.pathname.slice(1))
    byServer.set(server, [...(byServer.get(server) ?? []), { name, database }])
  }
  const fingerprints = new Map<string, string>()
  await Promise.all(
    [...byServer].map(async ([server, onIt]) => {
      const counts = await withServerClient(server, async (client) => {
        const { rows } = await client.query<{ datname: string; written: string | null; reset: string | null }>(
          `select datname, case when current_setting('track_counts')::boolean then (tup_inserted + tup_updated)::text end as written,
                  stats_reset::text as reset
             from pg_stat_database where datname = any($1::text[])`,
          [onIt.map(({ database }) => database)],
        )
        return new Map(rows.map((row) => [row.datname, row]))
      }).catch(() => new Map<string, { written: string | null; reset: string | null }>())
      const host = new URL(server).host
      for (const { name, database } of onIt) {
        const count = counts.get(database)
        // The database's address is part of it: a tenant moved to another database is visited.
        if (count?.written != null) fingerprints.set(name, `${host}/${database}:${count.written}:${count.reset ?? ''}`)
      }
    }),
  )
  return fingerprints
}

async function ensureTable(client: { query(text: string): Promise<unknown> }): Promise<void> {
  await client
    .query(
      `create table if not exists "entityctl_tenant_visit" (
         "Job" text not null, "Tenant" text not null, "Fingerprint" text not null, "DueAt" timestamptz, "VisitedAt" timestamptz not null,
         primary key ("Job", "Tenant"))`,
    )
    .catch((error: { code?: string }) => {
      // Two instances creating it at once: one of them fails on the catalog's unique index.
      if (error.code !== '23505' && error.code !== '42P07') throw error
    })
}
