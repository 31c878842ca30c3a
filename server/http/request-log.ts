// Gives every request an id and its state (ApiState, whose logger carries the id), and logs
// one line when it ends: method, path, status, duration (and the workflow and index it names,
// so a workflow's requests and its commit can be followed). The URL is logged without the
// values its query and path hold (logged-url.ts), unless Server:LogQueryValues; bodies and
// headers are not logged, so secrets (passwords, tokens) never reach the log. The same moment
// counts the request for the metrics (metrics/metrics.ts; nothing when they are off).

import { randomUUID } from 'node:crypto'
import type { Context, Next } from 'koa'
import type { Logger } from 'pino'
import { ApiState } from './api-state.ts'
import type { Metrics } from '../metrics/metrics.ts'

/** `logQueryValues`: Server:LogQueryValues. */
export function requestLog(logger: Logger, metrics: Metrics, logQueryValues: boolean) {
  return async function logRequest(ctx: Context & { state: ApiState }, next: Next): Promise<void> {
    const started = process.hrtime.bigint()
    const requestId = (ctx.get('X-Request-Id') || randomUUID()).slice(0, 64)
    ctx.state = new ApiState(requestId, logger, logQueryValues)
    ctx.set('X-Request-Id', requestId)
    try {
      await next()
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      // The tenant is known once the credentials name one the server serves, even if reading the caller then failed.
      const { tenant, user, pat } = ctx.state.who
      const { id: workflow, index: workflowIndex } = ctx.state.workflow ?? {}
      logger.info({ requestId, method: ctx.method, url: ctx.state.loggedUrl(ctx.originalUrl), status: ctx.status, ms: Math.round(ms * 10) / 10, tenant, user, pat, workflow, workflowIndex }, 'request')
      metrics.requestEnded(ctx.method, ctx.path, ctx.status, tenant, ms / 1000)
    }
  }
}
