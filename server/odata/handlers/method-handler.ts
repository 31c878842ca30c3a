// Plugin methods as OData functions (read: GET) and actions (modify: POST), static or bound
// to one entity (specification 4.3). The call is bound as a write is (odata/write/bind-write.ts:
// parameters from the path, the query string or the JSON body, typed by the plugin; the
// reply's query options; the execute permission), so a call refused for any of them changes
// nothing. Its plan then runs on the session: a read method's unit must change nothing, a
// modify method's changes pass the rules and are written together. Entity results are read
// through the query pipeline.

import { KEY } from '../../model/model.ts'
import { runPlan } from '../../writes/run-plan.ts'
import { isReadOnly } from '../../writes/write-plan.ts'
import type { Target } from '../semantic/bind-path.ts'
import { projectedContextPath, serviceRoot } from '../serializer/urls.ts'
import type { WriteReply } from '../write/bind-write.ts'
import { headless, readCollection, readEntity, requireMember } from './read-handler.ts'
import { planActor } from '../../writes/plan-actor.ts'
import { bind, replyOptions } from './write-handlers.ts'
import { jsonContentType } from './negotiate.ts'
import type { Exchange, RequestScope } from './exchange.ts'

type MethodTarget = Extract<Target, { kind: 'method' }>

export async function handleMethod(ctx: Exchange, scope: RequestScope, target: MethodTarget): Promise<void> {
  if (target.parent && target.key) await requireMember(scope, target.entity, target.key, target.parent)
  const body = (ctx.request as { body?: unknown }).body
  const { plan, reply } = bind(ctx, scope, { kind: 'call', target, httpMethod: ctx.method, path: ctx.path, body, ifMatch: ctx.get('If-Match'), options: replyOptions(ctx, scope) })
  // A reply that can fail on the data is read in the method's transaction: its failure undoes the call.
  const within = (reply.kind === 'entity' || reply.kind === 'entities') && reply.failsOnData
  const { results, etags } = await runPlan(
    scope.session,
    plan,
    planActor(scope.state.access),
    within ? { within: (session, { results }) => respond(ctx, { ...scope, session }, reply, results[0]) } : {},
  )
  // A modify method may change users and roles like any write (write-handlers.ts afterWrite).
  if (!isReadOnly(plan) && !scope.state.session) await scope.services.access.changed(scope.session.tenant)
  if (!within) await respond(ctx, scope, reply, results[0])
  // An action's empty answer carries its binding entity's new ETag, so a client's next If-Match holds.
  const etag = etags?.[0]
  if (ctx.status === 204 && target.key && etag !== undefined) ctx.set('ETag', etag)
}

/**
 * Answers with the method's result, read as the reply's query options ask and written as the
 * client negotiated (odata.metadata, IEEE754Compatible), as a read of the same shape is.
 */
async function respond(ctx: Exchange, scope: RequestScope, reply: WriteReply, result: unknown): Promise<void> {
  const root = serviceRoot(ctx, scope.services)
  switch (reply.kind) {
    case 'entities': {
      const keys = (Array.isArray(result) ? result : []).map((r) => String((r as Record<string, unknown>)[KEY]))
      const body = await readCollection(scope, { ...reply.read, keys }, root + projectedContextPath(reply.entity, reply.projection), ctx)
      ctx.type = jsonContentType(scope.format)
      ctx.body = headless(ctx, body)
      return
    }
    case 'entity': {
      const key = result ? String((result as Record<string, unknown>)[KEY]) : ''
      const read = { kind: 'entity' as const, entity: reply.entity, key, read: reply.read }
      const found = key ? await readEntity(scope, read, root + projectedContextPath(reply.entity, reply.projection, true)) : undefined
      if (!found) {
        ctx.status = 204
        ctx.body = null
        return
      }
      ctx.type = jsonContentType(scope.format)
      ctx.body = found.body
      return
    }
    case 'value': {
      const { metadata, ieee754 } = scope.format
      const value = primitiveValue(reply.type, result, ieee754)
      ctx.type = jsonContentType(scope.format)
      ctx.body = JSON.stringify(metadata === 'none' ? { value } : { '@odata.context': `${root}$metadata#${reply.declaredType}`, value })
      return
    }
    case 'none':
      ctx.status = 204
  }
}

/**
 * A method's primitive result as a read writes a value of its type (run-method.ts has already
 * made a JS Date its Edm literal): Edm.Decimal and Edm.Int64 as strings under
 * IEEE754Compatible=true.
 */
function primitiveValue(type: string, result: unknown, ieee754: boolean): unknown {
  if (ieee754 && (type === 'Edm.Decimal' || type === 'Edm.Int64') && typeof result === 'number') return String(result)
  return result ?? null
}
