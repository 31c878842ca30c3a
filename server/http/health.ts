// GET /healthz and GET /readyz at the server's root, outside /api and before every other stage
// (decisions.md, "Operations surface"): no credentials, no request log line (probes come every
// few seconds), JSON answers.
//
//   GET /healthz  200 {"status":"ok"}: the process serves
//   GET /readyz   200 {"status":"ready",...} or 503 {"status":"unavailable",...} (readiness.ts)

import type { Context, Next } from 'koa'
import type { Readiness } from './readiness.ts'

export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz'])

export function healthRoutes(readiness: Readiness) {
  return async function health(ctx: Context, next: Next): Promise<void> {
    const path = ctx.path
    // Another method goes on, to be answered 405 where errors are answered (app.ts).
    if (!PROBE_PATHS.has(path) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next()
    ctx.set('Cache-Control', 'no-store')
    if (path === '/healthz') {
      ctx.body = { status: 'ok' }
      return
    }
    const report = await readiness.report()
    ctx.status = report.status === 'ready' ? 200 : 503
    ctx.body = report
  }
}
