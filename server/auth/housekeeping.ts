// Purges what the auth subsystem no longer needs, on Housekeeping:Schedule (node-cron):
// PATs and refresh tokens expired (or revoked) more than Housekeeping:RetentionDays ago, and
// sign-in throttle rows whose lock and window are over. Each scheduled run is run by one
// instance of the deployment (run-lease.ts), on the tenants written since their last visit or
// holding a row due by now (tenant-visits.ts); a session advisory lock per tenant database
// keeps a run on demand from overlapping it.
//
//   const housekeeping = startHousekeeping(services)   // in start.ts, after createApp
//   await housekeeping.stop()                           // on shutdown, before closing pools

import { scheduleJob, type ScheduledJob } from '../scheduled-job.ts'
import type { TenantVisits } from '../tenant-visits.ts'
import type { AuthServices } from './auth-services.ts'
import { throttleWindowSeconds } from './sign-in-throttle.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'

/** pg_try_advisory_lock key: "ectl-hk" as a number, the same on every instance. */
const LOCK_KEY = 0x6563_746c_686b

/** Runs on the schedule; `run()` purges now, on every tenant this instance gets the lock of. A report per tenant visited. */
export type Housekeeping = ScheduledJob<PurgeReport[]>

export interface PurgeReport {
  readonly tenant: string
  readonly pats: number
  readonly refreshTokens: number
  readonly throttles: number
  /** false: another instance held the lock, nothing was done here. */
  readonly ran: boolean
}

export function startHousekeeping(services: AuthServices): Housekeeping {
  return scheduleJob(services, 'housekeeping', (visits) => purgeAll(services, visits))
}

async function purgeAll(services: AuthServices, visits: TenantVisits): Promise<PurgeReport[]> {
  const reports: PurgeReport[] = []
  for (const tenant of visits.due) {
    try {
      const { next, ...report } = await purgeTenant(services, tenant)
      reports.push(report)
      if (report.ran) visits.visited(tenant, next)
      if (report.ran && report.pats + report.refreshTokens + report.throttles > 0) {
        services.logger.info(report, 'housekeeping purged expired credentials')
      }
    } catch (error) {
      services.logger.warn({ tenant, err: (error as Error).message }, 'housekeeping of tenant failed')
    }
  }
  return reports
}

/** A purge's report, and when the first row it left falls due (null: none left). */
type Purge = PurgeReport & { readonly next: string | null }

async function purgeTenant(services: AuthServices, tenant: string): Promise<Purge> {
  const purged = await services.tenants.use(tenant, (db) => purgeDatabase(services, tenant, db))
  return purged ?? { tenant, pats: 0, refreshTokens: 0, throttles: 0, ran: false, next: null }
}

async function purgeDatabase(services: AuthServices, tenant: string, db: TenantDatabase): Promise<Purge> {
  const retention = services.config.Housekeeping.RetentionDays
  const window = throttleWindowSeconds(services.config.SignIn)
  const client = await db.pool.connect()
  try {
    const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [LOCK_KEY])
    if (!rows[0].locked) return { tenant, pats: 0, refreshTokens: 0, throttles: 0, ran: false, next: null }
    try {
      const before = `now() - make_interval(days => $1::int) - make_interval(secs => $2::double precision)`
      const whole = Math.floor(retention)
      const rest = (retention - whole) * 86_400
      const pats = await client.query(
        `delete from "_Pat" where "ExpiresAt" < ${before} or "RevokedAt" < ${before}`,
        [whole, rest],
      )
      const refreshTokens = await client.query(
        `delete from "_RefreshToken" where "ExpiresAt" < ${before} or "RevokedAt" < ${before}`,
        [whole, rest],
      )
      const throttles = await client.query(
        `delete from "_SignInLimit"
          where coalesce("LockedUntil", '-infinity') < now() and "WindowStart" < now() - make_interval(secs => $1)`,
        [window],
      )
      // When the first row left falls due: the conditions of the deletes above, solved for now().
      const left = await client.query<{ next: string | null }>(
        `select least(
           least((select min(least("ExpiresAt", "RevokedAt")) from "_Pat"),
                 (select min(least("ExpiresAt", "RevokedAt")) from "_RefreshToken"))
             + make_interval(days => $1::int) + make_interval(secs => $2::double precision),
           (select min(greatest("LockedUntil", "WindowStart" + make_interval(secs => $3))) from "_SignInLimit"))::text as next`,
        [whole, rest, window],
      )
      return {
        tenant, pats: pats.rowCount ?? 0, refreshTokens: refreshTokens.rowCount ?? 0, throttles: throttles.rowCount ?? 0, ran: true,
        next: left.rows[0].next,
      }
    } finally {
      await client.query('select pg_advisory_unlock($1)', [LOCK_KEY])
    }
  } finally {
    client.release()
  }
}
