// A job that runs on Housekeeping:Schedule (node-cron), never twice at once, and can also
// be run on demand (tests, the CLI). Each scheduled run is run by one instance of the
// deployment: the one that claims its lease (run-lease.ts). Its failures are logged, never
// thrown at the scheduler.

import cron from 'node-cron'
import type { Logger } from 'pino'
import type { Config } from './config/load-config.ts'
import type { TenantRegistry } from './tenancy/tenant-registry.ts'
import { claimScheduledRun, deploymentOf } from './run-lease.ts'

/** What a job needs: the schedule, a log for its failures, and the tenants (for its lease). */
export interface JobServices {
  readonly config: Config
  readonly logger: Logger
  readonly tenants: TenantRegistry
}

export interface ScheduledJob<T> {
  /** Runs the job now, or joins the run already in progress. */
  run(): Promise<T>
  /** What the schedule does at its run due at `scheduledAt`: runs the job if this instance claims the run. */
  scheduled(scheduledAt: Date): Promise<T | undefined>
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>
}

export function scheduleJob<T>(services: JobServices, name: string, work: () => Promise<T>): ScheduledJob<T> {
  const { config, logger } = services
  if (!cron.validate(config.Housekeeping.Schedule)) {
    throw new Error(`Configuration Housekeeping:Schedule: '${config.Housekeeping.Schedule}' is not a valid cron expression.`)
  }
  let running: Promise<T> | undefined
  const run = () =>
    (running ??= work().finally(() => {
      running = undefined
    }))
  const deployment = deploymentOf([...config.Tenants.values()].map((tenant) => services.tenants.urlOf(tenant)))
  const scheduled = async (scheduledAt: Date) => ((await claimScheduledRun(services.tenants.serverUrl, name, scheduledAt, deployment)) ? run() : undefined)
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
