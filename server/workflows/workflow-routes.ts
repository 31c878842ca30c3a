// Workflows (specification 1, 2.4, 3.1, 4.7; decisions.md "Workflows"): several requests
// applied without committing, their business results visible, one atomic commit.
//
//   POST /api/workflow                           → 200 { message, workflowId }
//   any OData request + Workflow-Id, Workflow-Index (1, 2, 3, …)  → its usual answer
//   POST /api/workflow/commit  + both headers    → 200 { workflowId, committed: true }
//   POST /api/workflow/abort   + both headers    → 200 { workflowId, aborted: true }
//
// An open workflow is rows in the tenant database (workflow-store.ts), never an open
// transaction: between requests it holds no lock and no connection, any instance sharing
// the database serves its next request, and a restart loses nothing. A request opens one
// transaction, locks the workflow's row (so duplicates of one index run one after the other:
// the second gets the stored answer or 409), takes a savepoint, rebuilds the pending state
// from the write plans the earlier requests stored (workflow-rebuild.ts: one unit of work,
// one write), runs the new one with a session on that transaction (workflow-session.ts:
// every read, $filter, $expand, $count, $apply or method, sees the pending changes), rolls
// back to the savepoint, records the request's plans with its answer, and commits that record
// alone. The commit rebuilds the same way and commits it; a stored request that fails
// validation, or finds a row it changes at another version than on its first run, fails the
// commit and leaves the workflow as it was.
//
// Cost model: the rebuild applies the plans in memory and writes their net result in one
// statement, so request n costs its own work plus work proportional to the changes the
// workflow holds (no HTTP, no reply read again); reads are stored (for the index and a safe
// retry) but hold no plan. Workflow:MaxRequests (default 200) bounds n: above it, 400
// WorkflowLimitExceeded. Row locks taken by the rebuild last one request, not the workflow.
// Workflow:MaxOpenPerUser (default 20) bounds the open workflows of a user, so the rows one
// client can leave in the tenant database are bounded too: past it a start is 400
// WorkflowLimitExceeded naming them, until one is committed, aborted or expires.

import type Router from '@koa/router'
import type { Context, Middleware, Next } from 'koa'
import { AuthError } from '../errors.ts'
import { holdsAtLeast, type AccessContext } from '../auth/access-context.ts'
import { authenticate } from '../auth/authenticate.ts'
import type { ApiState } from '../http/api-state.ts'
import type { ApiContext } from '../odata/handlers/exchange.ts'
import { GUID_PATTERN, newGuid } from '../persistence/guid.ts'
import type { WorkflowServices as Services } from './workflow-services.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { WorkflowError } from './workflow-errors.ts'
import { rebuildWorkflow, refuseRecreated, restoreWorkflow } from './workflow-rebuild.ts'
import { planActor } from '../writes/plan-actor.ts'
import { WorkflowSession } from './workflow-session.ts'
import { inTransaction as inPoolTransaction, plainSql, type Sql } from '../persistence/sql.ts'
import { metAnotherWrite } from '../persistence/database-errors.ts'
import {
  abortWorkflow,
  createWorkflow,
  findWorkflow,
  loadAnswer,
  loadReplayable,
  lockWorkflow,
  markCommitted,
  recordRequest,
  type StoredAnswer,
  type WorkflowRow,
} from './workflow-store.ts'

/** The fixed system routes (decisions.md "Names and routes") write outside any session. */
const SYSTEM_ROUTES = /^\/api\/(auth|user\/pats|workflow|roles\/tree)(\/|$)/i
/** The system routes that take a workflow's headers: they end it. */
const ENDING_ROUTES = /^\/api\/workflow\/(commit|abort)\/?$/i

/** Answer headers a safe retry sends again. */
const ANSWER_HEADERS = ['content-type', 'etag', 'location', 'odata-entityid', 'preference-applied']

interface WorkflowHeaders {
  readonly id: string
  readonly index: number
}

export function workflowRoutes(router: Router<ApiState>, services: Services): void {
  const { IdleTimeoutMinutes: idleMinutes, MaxOpenPerUser: maxOpen } = services.config.Workflow
  const authenticated = authenticate(services)

  router.post('/workflow', authenticated, async (ctx) => {
    const { tenant, access } = signedIn(ctx as ApiContext)
    const id = newGuid()
    await inTransaction(tenant, async (sql) => {
      const started = await createWorkflow(sql, { id, userGuid: access.userGuid, idleMinutes, maxOpen })
      if (!started.created) throw WorkflowError.tooManyOpen(maxOpen, started.open, idleMinutes)
    })
    // Named in the log line only once it exists.
    ctx.state.workflow = { id }
    services.metrics.workflows('created')
    ctx.body = {
      message:
        `Workflow started. Send each request with Workflow-Id: ${id} and Workflow-Index: 1, 2, 3, …; ` +
        'then POST /api/workflow/commit (or /api/workflow/abort) with the next index.',
      workflowId: id,
    }
  })

  router.post('/workflow/commit', authenticated, async (ctx) => {
    const { tenant, access } = signedIn(ctx as ApiContext)
    const { id, index } = requireHeaders(ctx as ApiContext)
    ctx.state.workflow = { id, index }
    let retried = false
    let wroteAccess = false
    await inTransaction(tenant, async (sql) => {
      const workflow = await lockWorkflow(sql, id, access.userGuid)
      if (workflow?.status === 'committed' && !workflow.expired && index === workflow.lastIndex) {
        retried = true // a retried commit: counted the first time
        return
      }
      const open = requireOpen(id, workflow, idleMinutes)
      if (index !== open.lastIndex + 1) throw WorkflowError.indexConflict(index, open.lastIndex + 1)
      const requests = await loadReplayable(sql, id)
      await rebuildWorkflow(tenant, sql, requests, planActor(access))
      await markCommitted(sql, id, index, idleMinutes)
      // What the requests wrote, rows they added included (a role granted is a UserRole added).
      wroteAccess = requests.some((request) => request.rows.some((row) => services.model.entities.get(row.entity)?.system))
    })
    // Users, roles or their links changed: every instance hears it before the answer (access-service.ts `changed`).
    if (wroteAccess) await services.access.changed(tenant)
    if (!retried) services.metrics.workflows('committed')
    ctx.body = { workflowId: id, committed: true }
  })

  // Aborting is always possible: the index is required but not checked against the sequence.
  router.post('/workflow/abort', authenticated, async (ctx) => {
    const { tenant, access } = signedIn(ctx as ApiContext)
    const { id, index } = requireHeaders(ctx as ApiContext)
    ctx.state.workflow = { id, index }
    const sql = plainSql(tenant.pool)
    if (!(await abortWorkflow(sql, id, access.userGuid))) {
      // Not open: say why (committed, expired), as any other request of it would.
      requireOpen(id, await findWorkflow(sql, id, access.userGuid), idleMinutes)
      throw WorkflowError.notFound(id)
    }
    services.metrics.workflows('aborted')
    ctx.body = { workflowId: id, aborted: true }
  })
}

/**
 * The workflow stage of an OData request (app.ts): one that names a workflow runs inside it,
 * as described above; any other passes through untouched.
 */
export function workflowStage(services: Services): Middleware<ApiState> {
  const { IdleTimeoutMinutes: idleMinutes, MaxRequests: maxRequests } = services.config.Workflow
  return async (ctx, next) => {
    const headers = workflowHeaders(ctx as ApiContext)
    if (!headers) return next()
    const live = ctx as ApiContext
    live.state.workflow = headers
    const { tenant, access } = signedIn(live)
    await inTransaction(tenant, async (sql) => {
      const open = requireOpen(headers.id, await lockWorkflow(sql, headers.id, access.userGuid), idleMinutes)
      if (headers.index === open.lastIndex) return answerAgain(live, sql, headers, access)
      if (headers.index !== open.lastIndex + 1) throw WorkflowError.indexConflict(headers.index, open.lastIndex + 1)
      if (headers.index > maxRequests) throw WorkflowError.limitExceeded(maxRequests)

      await sql('savepoint workflow_replay')
      const stored = await loadReplayable(sql, headers.id)
      await restoreWorkflow(tenant, sql, stored)
      const session = new WorkflowSession(tenant, sql, { pending: true })
      live.state.session = session
      await next()
      refuseRecreated(tenant.model, stored, { index: headers.index, method: live.method, path: live.url, rows: session.rows })
      const answer = answerOf(live)
      await sql('rollback to savepoint workflow_replay')
      // A failure throws before this point and rolls everything back: the workflow stays as it was.
      if (answer.status >= 400) return
      const request = {
        index: headers.index,
        method: live.method,
        path: live.url,
        plans: session.plans,
        rows: session.rows,
        at: session.at,
        guids: session.guids,
        touched: [...session.touched.values()],
      }
      await recordRequest(sql, headers.id, request, answer, { fullAccess: access.fullAccess, responsibilities: [...access.responsibilities] }, idleMinutes)
    })
  }
}

/**
 * Before the fixed routes (app.ts): a system route sent with a workflow's headers is refused.
 * Done at once, for good, it would let the client think it pending, and gone with an abort
 * (a PAT created, a token issued).
 */
export async function refuseSystemRoutesInWorkflow(ctx: Context, next: Next): Promise<void> {
  if ((ctx.get('Workflow-Id') || ctx.get('Workflow-Index')) && SYSTEM_ROUTES.test(ctx.path) && !ENDING_ROUTES.test(ctx.path)) {
    throw WorkflowError.notInWorkflow(ctx.path)
  }
  await next()
}

/**
 * A safe retry: the last accepted index again, with the same method and path (and query). Its
 * answer was authorized with the access of its first run; it is given again only to a caller
 * who still holds that much (not after a role was taken away, nor to the owner's narrower PAT).
 */
async function answerAgain(ctx: ApiContext, sql: Sql, headers: WorkflowHeaders, access: AccessContext): Promise<void> {
  const stored = await loadAnswer(sql, headers.id, headers.index)
  if (!stored || stored.method !== ctx.method || stored.path !== ctx.url) throw WorkflowError.indexConflict(headers.index, headers.index + 1)
  if (!stored.access || !holdsAtLeast(access, stored.access)) throw WorkflowError.answeredWithOtherAccess({ index: headers.index, method: stored.method, path: stored.path })
  ctx.status = stored.answer.status
  for (const [name, value] of Object.entries(stored.answer.headers)) ctx.set(name, value)
  ctx.body = stored.answer.body
}

function requireOpen(id: string, workflow: WorkflowRow | undefined, idleMinutes: number): WorkflowRow {
  if (!workflow) throw WorkflowError.notFound(id)
  if (workflow.expired) throw WorkflowError.notFound(id, `it expired after ${idleMinutes} minutes without a request`)
  if (workflow.status === 'committed') throw WorkflowError.notFound(id, 'it was committed')
  return workflow
}

/**
 * One transaction for the whole request; a deadlock with another writer, or a row another
 * write changed under this one (persistence/unit-of-work.ts), is a 409 to retry.
 */
async function inTransaction(tenant: TenantDatabase, work: (sql: Sql) => Promise<void>): Promise<void> {
  try {
    await inPoolTransaction(tenant.pool, (client) => work(plainSql(client)))
  } catch (error) {
    // 55P03: a lock it waited for was not granted (lock_not_available).
    if (metAnotherWrite(error) || (error as { code?: string }).code === '55P03') throw WorkflowError.busy()
    throw error
  }
}

function workflowHeaders(ctx: ApiContext): WorkflowHeaders | undefined {
  const id = ctx.get('Workflow-Id').trim()
  const index = ctx.get('Workflow-Index').trim()
  if (!id && !index) return undefined
  if (!id || !index) {
    throw WorkflowError.headers('Workflow-Id and Workflow-Index go together: send both inside a workflow, neither outside.', id ? 'Workflow-Index' : 'Workflow-Id')
  }
  if (!GUID_PATTERN.test(id)) throw WorkflowError.headers(`Workflow-Id '${id}' is not a workflowId: POST /api/workflow gives one.`)
  if (!/^[0-9]{1,9}$/.test(index) || Number(index) < 1) throw WorkflowError.headers(`Workflow-Index '${index}' must be an integer from 1.`, 'Workflow-Index')
  return { id: id.toLowerCase(), index: Number(index) }
}

function requireHeaders(ctx: ApiContext): WorkflowHeaders {
  const headers = workflowHeaders(ctx)
  if (!headers) throw WorkflowError.headers('This call needs the Workflow-Id and Workflow-Index headers.')
  return headers
}

function signedIn(ctx: ApiContext): { tenant: TenantDatabase; access: NonNullable<ApiState['access']> } {
  const { tenant, access } = ctx.state
  if (!tenant || !access) throw AuthError.missingCredentials()
  return { tenant, access }
}

function answerOf(ctx: ApiContext): StoredAnswer {
  const headers: Record<string, string> = {}
  for (const name of ANSWER_HEADERS) {
    const value = ctx.response.get(name)
    if (value) headers[name] = String(value)
  }
  const body = ctx.body
  const text = body === undefined || body === null ? null : typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : JSON.stringify(body)
  return { status: ctx.status, headers, body: text }
}
