// Which instance runs a scheduled job's run: the first to claim the run's lease. Every
// instance of a deployment fires the same schedule; each claims the run by its scheduled time
// in one row per job, kept in the postgres database of the configured database server (the
// one place all instances share). The row moves only forward, so a run is claimed once
// however the instances' clocks differ, as long as they differ by less than the schedule's
// interval; a lock held only while running let a late instance run it again.
//
//   if (await claimScheduledRun(serverUrl, 'housekeeping', scheduledAt, deployment)) await run()

import { createHash, randomUUID } from 'node:crypto'
import { databaseUrl, withServerClient } from './tenancy/database-server.ts'

const HOLDER = randomUUID()

/**
 * How long a lease, or a job's tenant visits (tenant-visits.ts), is kept after its last claim
 * or visit. A deployment is named by its tenants, so `tenant add` gives it a new name and the
 * rows of the old one are never claimed again: they are forgotten after this long. A lease is
 * only needed while instances may still claim that run, so far less than this (clock skew);
 * a job's own lease forgotten between two rare runs (a monthly schedule) is claimed anew.
 */
export const FORGOTTEN_AFTER = '7 days'

/**
 * A deployment's name for its leases: deployments that share a database server (each with
 * its own tenants) must not take each other's turns.
 */
export function deploymentOf(tenantUrls: Iterable<string>): string {
  return createHash('sha256').update([...tenantUrls].sort().join('\n')).digest('base64url').slice(0, 16)
}

/** True for the one instance that claims this run of the job; false for the others. */
export async function claimScheduledRun(serverUrl: string, job: string, scheduledAt: Date, deployment: string): Promise<boolean> {
  const slot = new Date(Math.floor(scheduledAt.getTime() / 1000) * 1000)
  return withServerClient(databaseUrl(serverUrl, 'postgres'), async (client) => {
    await client.query(
      `create table if not exists "entityctl_run_lease" (
         "Job" text primary key, "ScheduledAt" timestamptz not null, "Holder" text not null, "ClaimedAt" timestamptz not null)`,
    ).catch((error: { code?: string }) => {
      // Two instances creating it at once: one of them fails on the catalog's unique index.
      if (error.code !== '23505' && error.code !== '42P07') throw error
    })
    // The claim forgets, in the same statement, the leases no instance has claimed for long.
    const { rowCount } = await client.query(
      `with forgotten as (delete from "entityctl_run_lease" where "Job" <> $1 and "ClaimedAt" < now() - $4::interval)
       insert into "entityctl_run_lease" ("Job", "ScheduledAt", "Holder", "ClaimedAt") values ($1, $2, $3, now())
       on conflict ("Job") do update set "ScheduledAt" = excluded."ScheduledAt", "Holder" = excluded."Holder", "ClaimedAt" = now()
         where "entityctl_run_lease"."ScheduledAt" < excluded."ScheduledAt"`,
      [`${deployment}:${job}`, slot, HOLDER, FORGOTTEN_AFTER],
    )
    return rowCount === 1
  })
}
