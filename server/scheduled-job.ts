// A job that runs on Housekeeping:Schedule (node-cron), never twice at once, and can also
// be run on demand (tests, the CLI). Its failures are logged, never thrown at the scheduler.

import cron from 'node-cron'
import type { Logger } from 'pino'
import type { Config } from './config/load-config.ts'

/** What a job needs: the schedule, and a log for its failures. */
export interface JobServices {
  readonly config: Config
  readonly logger: Logger
}

export interface ScheduledJob<T> {
  /** Runs the job now, or joins the run already in progress. */
  run(): Promise<T>
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
  const task = cron.schedule(
    config.Housekeeping.Schedule,
    async () => {
      try {
        await run()
      } catch (error) {
        logger.error({ err: error }, `${name} failed`)
      }
    },
    { name: `entityctl-${name}`, noOverlap: true },
  )
  return {
    run,
    async stop() {
      await task.stop()
      await task.destroy()
      await running?.catch(() => {})
    },
  }
}
