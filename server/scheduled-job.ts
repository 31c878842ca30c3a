// A job that runs on Housekeeping:Schedule (node-cron), never twice at once, and can also
// be run on demand (tests, the CLI). Each scheduled run is run by one instance of the
// deployment: the one that claims its lease (run-lease.ts), and visits only the tenants that
// may have something for it (tenant-visits.ts); a run on demand visits every tenant. Its
// failures are logged, never thrown at the scheduler.

import cron from 'node-cron'
import type { Logger } from 'pino'
import type { Config } from './config/load-config.ts'
import type { TenantRegistry } from './tenancy/tenant-registry.ts'
import { claimScheduledRun, deploymentOf } from './run-lease.ts'
import { planVisits, type TenantVisits } from './tenant-visits.ts'

/** What a job needs: the schedule, a log for its failures, and the tenants (for its lease). */
export interface JobServices {
  readonly config: Config
  readonly logger: Logger
  readonly tenants: TenantRegistry
}

/** A run's work: visits `visits.due` and notes each visit done (tenant-visits.ts). */
export type JobWork<T> = (visits: TenantVisits) => Promise<T>

export interface ScheduledJob<T> {
  /** Runs the job now on every tenant, or joins the run in progress. */
  run(): Promise<T>
  /**
   * What the schedule does at its run due at `scheduledAt`: runs the job, on the tenants that
   * may have something for it, if this instance claims the run.
   */
  scheduled(scheduledAt: Date): Promise<T | undefined>
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>
}

export function scheduleJob<T>(services: JobServices, name: string, work: JobWork<T>): ScheduledJob<T> {
  const { config, logger } = services
  // The deployment is named by its tenants as they are at the run, not at the start: an
  // instance started before a `tenant add` and one started after it claim the same lease.
  const deployment = () => deploymentOf([...services.tenants.configured().values()].map((tenant) => services.tenants.urlOf(tenant)))
  let running: Promise<T> | undefined
  const runOn = (every: boolean) =>
    (running ??= (async () => {
      const visits = await planVisits(services.tenants, `${deployment()}:${name}`, { every })
      const result = await work(visits)
      await visits.record()
      return result
    })().finally(() => {
      running = undefined
    }))
  const run = () => runOn(true)
  const scheduled = async (scheduledAt: Date) =>
    (await claimScheduledRun(services.tenants.serverUrl, name, scheduledAt, deployment())) ? runOn(false) : undefined
  const task = cron.schedule(
    config.Housekeeping.Schedule,
    async (context) => {
      try {
        await scheduled(context.date)
      } catch (error) {
        logger.error({ err: error }, `${name} failed`)
      }
    },
    { name: `entityctl-${name}`, noOverlap: true },
  )
  return {
    run,
    scheduled,
    async stop() {
      await task.stop()
      await task.destroy()
      await running?.catch(() => {})
    },
  }
}
