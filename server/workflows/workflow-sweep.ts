// Discards expired workflows on Housekeeping:Schedule (node-cron). An expired workflow is
// already refused when used (404 WorkflowNotFound); the sweep only frees its rows. Each
// scheduled sweep is run by one instance of the deployment (run-lease.ts), on the tenants
// written since their last sweep or holding a workflow expired by now (tenant-visits.ts); a
// sweep run on demand besides is harmless: the delete is idempotent and waits for a request
// in progress, which moves the expiry on, so an active workflow is never swept.
//
//   const sweep = startWorkflowSweep(services)   // in start.ts, once the server listens
//   await sweep.stop()                           // on shutdown, before closing pools

import { scheduleJob, type ScheduledJob } from '../scheduled-job.ts'
import type { WorkflowServices as Services } from './workflow-services.ts'
import { firstWorkflowExpiry, purgeExpiredWorkflows } from './workflow-store.ts'
import type { TenantVisits } from '../tenant-visits.ts'
import { plainSql } from '../persistence/sql.ts'

/** Runs on the schedule; `run()` sweeps every tenant now and returns how many workflows it discarded. */
export type WorkflowSweep = ScheduledJob<number>

export function startWorkflowSweep(services: Services): WorkflowSweep {
  return scheduleJob(services, 'workflow sweep', (visits) => sweepAll(services, visits))
}

async function sweepAll(services: Services, visits: TenantVisits): Promise<number> {
  let total = 0
  for (const tenant of visits.due) {
    try {
      const sweep = await services.tenants.use(tenant, async (db) => {
        const sql = plainSql(db.pool)
        return { swept: await purgeExpiredWorkflows(sql), next: await firstWorkflowExpiry(sql) }
      })
      if (!sweep) continue
      const { swept, next } = sweep
      visits.visited(tenant, next)
      total += swept
      if (swept > 0) services.logger.info({ tenant, workflows: swept }, 'expired workflows discarded')
      services.metrics.workflows('expired', swept)
    } catch (error) {
      services.logger.warn({ tenant, err: (error as Error).message }, 'workflow sweep of tenant failed')
    }
  }
  return total
}
