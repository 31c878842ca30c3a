// Replays a workflow's stored requests, in order, on the workflow's transaction, through the
// same OData handlers a live request takes (a router of their own, fed a Koa context built
// from the stored method, path, headers and body). Each request gets its first run's clock
// and Guids back, so it writes what it wrote then; the rows it changes must still carry the
// versions it found then, or someone changed them outside the workflow: 409 naming them.

import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import Router from '@koa/router'
import type { Middleware } from 'koa'
import type { Sql } from '../persistence/sql.ts'
import { ServiceError, type ErrorDetail } from '../errors.ts'
import type { ApiState } from '../http/api-state.ts'
import type { WorkflowServices as Services } from './workflow-services.ts'
import { odataRoutes, type ApiContext } from '../odata/handlers/odata-routes.ts'
import { translateDatabaseError } from '../persistence/database-errors.ts'
import { WorkflowError } from './workflow-errors.ts'
import { WorkflowSession } from './workflow-session.ts'
import type { StoredRequest, Touch } from './workflow-store.ts'

export class WorkflowReplayer {
  readonly #services: Services
  readonly #dispatch: Middleware

  constructor(services: Services) {
    this.#services = services
    const router = new Router<ApiState>({ prefix: '/api', sensitive: false })
    odataRoutes(router, services)
    this.#dispatch = router.routes() as unknown as Middleware
  }

  /** Runs `requests` again on the transaction of `sql`, as `live`'s user; throws the first that no longer applies. */
  async replay(live: ApiContext, sql: Sql, requests: readonly StoredRequest[]): Promise<void> {
    for (const request of requests) {
      const session = new WorkflowSession(live.state.tenant!, sql, { at: request.at, guids: request.guids })
      const ctx = replayContext(live, request, session)
      try {
        await this.#dispatch(ctx, async () => {})
      } catch (error) {
        const known = error instanceof ServiceError ? error : translateDatabaseError(error)
        if (!known) throw error
        throw WorkflowError.noLongerApplies(request, known)
      }
      const changed = changesOutside(this.#services, request.touched, session.touched)
      if (changed.length > 0) throw WorkflowError.changedOutside(request, changed)
    }
  }
}

/** A Koa context for a stored request, on the live request's app, user and tenant. */
function replayContext(live: ApiContext, request: StoredRequest, session: WorkflowSession): ApiContext {
  const req = new IncomingMessage(new Socket())
  req.method = request.method
  req.url = request.path
  req.headers = { host: live.get('Host'), ...lowerCased(request.headers) }
  const ctx = live.app.createContext(req, new ServerResponse(req)) as unknown as ApiContext
  ctx.state = live.state.inSession(session)
  ;(ctx.request as { body?: unknown }).body = request.body ?? undefined
  return ctx
}

function lowerCased(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}

/**
 * Rows whose version differs from the one the request found on its first run, or that it
 * changes now but did not then (a row added outside that a cascade now reaches):
 *   OrderLines(…): version 1 then, 2 now
 */
function changesOutside(services: Services, recorded: readonly Touch[], replayed: ReadonlyMap<string, Touch>): ErrorDetail[] {
  const label = (entity: string, key: string) => `${services.model.entities.get(entity)?.setName ?? entity}(${key})`
  const details: ErrorDetail[] = []
  const seen = new Set<string>()
  for (const [entity, key, version] of recorded) {
    const id = `${entity}(${key})`
    seen.add(id)
    const now = replayed.get(id)
    if (!now) {
      details.push({ code: 'Conflict', target: label(entity, key), message: `${label(entity, key)} was changed outside the workflow: the request no longer reaches it.` })
    } else if (now[2] !== version) {
      details.push({
        code: 'Conflict',
        target: label(entity, key),
        message: `${label(entity, key)} was changed outside the workflow: row version ${version} when the workflow changed it, ${now[2]} now.`,
      })
    }
  }
  for (const [id, [entity, key]] of replayed) {
    if (seen.has(id)) continue
    details.push({ code: 'Conflict', target: label(entity, key), message: `${label(entity, key)} appeared outside the workflow and would now be changed by it too.` })
  }
  return details
}
