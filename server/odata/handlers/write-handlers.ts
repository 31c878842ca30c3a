// POST (create, deep insert), PATCH/PUT (update) and DELETE (with cascades): a straight line,
// as a read is: parse the reply's options → bind the write (odata/write/bind-write.ts: body,
// references, If-Match, the reply's read, permissions) → run its plan on the session (the
// unit of work applies it, its flush runs the rules and writes in one statement) → answer
// with the written entity, read through the read path. Everything the request alone can be
// refused for is refused by the binder, before the database is touched; what the data decides
// (the entity exists, its ETag matches) is decided before the flush. A refused write writes
// nothing.

import { RequestError } from '../../errors.ts'
import type { CollectionProperty, EntityModel, ReferenceProperty } from '../../model/model.ts'
import { runPlan } from '../../writes/run-plan.ts'
import { planActor } from '../../writes/plan-actor.ts'
import { bindWrite, type BoundWrite, type WriteBinding, type WriteRequest } from '../write/bind-write.ts'
import type { DefaultSelect } from '../semantic/bind-read.ts'
import { projectedContextPath, serviceRoot } from '../serializer/urls.ts'
import { parseReadOptions, readBackOf, readEntity, type EntityRead } from './read-handler.ts'
import type { BoundEntityByKey, BoundEntityRead } from '../semantic/bound.ts'
import { jsonContentType } from './negotiate.ts'
import type { Exchange, RequestScope } from './exchange.ts'
import { PartExchange } from './batch-part-exchange.ts'

/** `parent`: created through a parent's collection (`POST Customers(k)/Orders`), bound to it. */
type CreateParent = NonNullable<Extract<WriteRequest, { kind: 'create' }>['parent']>

export async function handleCreate(ctx: Exchange, scope: RequestScope, entity: EntityModel, parent?: CreateParent): Promise<void> {
  const options = replyOptions(ctx, scope)
  const minimal = prefers(ctx, 'return=minimal')
  const representation = !minimal && prefers(ctx, 'return=representation')
  const bound = bind(ctx, scope, { kind: 'create', entity, body: requestBody(ctx), options, representation, parent })
  const key = await write(ctx, scope, bound, !minimal)
  await afterWrite(scope, entity)
  const location = `${serviceRoot(ctx, scope.services)}${entity.setName}(${key})`
  if (minimal || ctx.status !== 200) {
    ctx.status = 204
    ctx.set('OData-EntityId', location)
    ctx.set('Location', location)
    if (minimal) ctx.set('Preference-Applied', 'return=minimal')
    return
  }
  ctx.set('Location', location)
  if (representation) ctx.set('Preference-Applied', 'return=representation')
}

export async function handleUpdate(ctx: Exchange, scope: RequestScope, entity: EntityModel, key: string, mode: 'patch' | 'put'): Promise<void> {
  const options = replyOptions(ctx, scope)
  // return=minimal wins over $select and $expand, as it does on a create.
  const minimal = prefers(ctx, 'return=minimal')
  const representation = !minimal && prefers(ctx, 'return=representation')
  const wantsBody = !minimal && (options.select !== undefined || options.expand !== undefined || representation)
  const request = { kind: 'update' as const, entity, key, mode, body: requestBody(ctx), ifMatch: ctx.get('If-Match'), ifNoneMatch: ctx.get('If-None-Match'), options, representation, answered: wantsBody }
  const bound = bind(ctx, scope, request)
  await write(ctx, scope, bound, wantsBody)
  await afterWrite(scope, entity)
  if (ctx.status !== 200) {
    ctx.status = 204
    if (minimal) ctx.set('Preference-Applied', 'return=minimal')
    return
  }
  if (representation) ctx.set('Preference-Applied', 'return=representation')
}

export async function handleDelete(ctx: Exchange, scope: RequestScope, entity: EntityModel, key: string): Promise<void> {
  const bound = bind(ctx, scope, { kind: 'delete', entity, key, ifMatch: ctx.get('If-Match'), ifNoneMatch: ctx.get('If-None-Match'), options: replyOptions(ctx, scope) })
  await runPlan(scope.session, bound.plan, planActor(scope.state.access))
  await afterWrite(scope, entity)
  ctx.status = 204
}

/**
 * `$ref` writes (PUT or POST to set a link, DELETE to remove one): an update of the entity that
 * holds the reference, bound and planned as one (bind-write.ts), answered 204.
 */
export async function handleLink(ctx: Exchange, scope: RequestScope, navigation: ReferenceProperty | CollectionProperty, key: string, kind: 'link' | 'unlink', member?: string): Promise<void> {
  const ifMatch = ctx.get('If-Match')
  const request: WriteRequest =
    kind === 'link'
      ? { kind, navigation, key, body: requestBody(ctx), ifMatch }
      : { kind, navigation, key, member: member ?? new URLSearchParams(ctx.querystring).get('$id') ?? undefined, ifMatch }
  const bound = bind(ctx, scope, request)
  await runPlan(scope.session, bound.plan, planActor(scope.state.access))
  await afterWrite(scope, navigation.kind === 'reference' ? navigation.entity : navigation.target)
  ctx.status = 204
}

/**
 * Runs the bound write and, when `answer`, reads the written entity into the answer (200 and
 * its ETag; the status stays otherwise: the entity is gone meanwhile). A reply that can fail on
 * the data is read in the write's transaction, so its failure is the request's and nothing is
 * written. A reply of the written row alone (no expand, no $compute: nothing another row of
 * the write could change) is read by the write's own statement; any other after the write.
 * Returns the key written.
 */
async function write(ctx: Exchange, scope: RequestScope, bound: BoundWrite, answer: boolean): Promise<string> {
  const { reply } = bound
  const read = !answer || reply.kind !== 'entity' ? 'none' : reply.failsOnData ? 'within' : readsOnlyItsRow(reply.read) ? 'byTheWrite' : 'after'
  let readBack: ReturnType<typeof readBackOf> | undefined
  const { results, etags } = await runPlan(scope.session, bound.plan, planActor(scope.state.access), {
    within: read === 'within' ? (session, { results }) => answerWith(ctx, { ...scope, session }, bound, String(results[0])) : undefined,
    readBack: read === 'byTheWrite' ? ({ results }) => (readBack = readBackOf(scope, writtenEntity(bound, String(results[0])), replyContext(ctx, scope, bound))).readBack : undefined,
  })
  const key = String(results[0])
  // The new ETag, for an answer without the entity; an answer with it sets its own.
  const etag = etags?.[0]
  if (etag !== undefined) ctx.set('ETag', etag)
  const readByTheWrite = readBack?.found()
  if (readByTheWrite) answerWithEntity(ctx, scope, readByTheWrite)
  // Read after the write: a reply that must be, or a row the write's statement did not write (nothing changed it).
  else if (read === 'after' || read === 'byTheWrite') await answerWith(ctx, scope, bound, key)
  return key
}

/** Whether a reply reads nothing but the written row's own columns (see write). */
function readsOnlyItsRow(read: BoundEntityRead): boolean {
  return read.expand.length === 0 && !read.computed?.length
}

async function answerWith(ctx: Exchange, scope: RequestScope, bound: BoundWrite, key: string): Promise<void> {
  const found = await readEntity(scope, writtenEntity(bound, key), replyContext(ctx, scope, bound))
  if (found) answerWithEntity(ctx, scope, found)
}

/** The reply's read of the written entity `key`. */
function writtenEntity(bound: BoundWrite, key: string): BoundEntityByKey {
  const { reply } = bound
  if (reply.kind !== 'entity') throw new Error('only an entity reply reads the written entity')
  return { kind: 'entity', entity: reply.entity, key, read: reply.read }
}

function answerWithEntity(ctx: Exchange, scope: RequestScope, found: EntityRead): void {
  ctx.status = 200
  ctx.set('ETag', found.etag)
  ctx.type = jsonContentType(scope.format)
  ctx.body = found.body
}

/** The reply's context URL: what a read of the entity with the same options names. */
function replyContext(ctx: Exchange, scope: RequestScope, bound: BoundWrite): string {
  const { reply } = bound
  if (reply.kind !== 'entity') throw new Error('only an entity reply reads the written entity')
  return serviceRoot(ctx, scope.services) + projectedContextPath(reply.entity, reply.projection, true)
}

/** Binds a write for the request's caller (every permission it needs is checked here). */
export function bind(ctx: Exchange, scope: RequestScope, request: WriteRequest): BoundWrite {
  return bindWrite({ ...writeBinding(scope), serviceRoot: serviceRoot(ctx, scope.services) }, request, scope.state.access)
}

/** The reply's query options, parsed within the limits a read's are. */
export function replyOptions(ctx: Exchange, scope: RequestScope): ReturnType<typeof parseReadOptions> {
  return parseReadOptions(ctx.querystring, scope.services.config.ApiOptions.MaxNodeCount)
}


/** What binding needs of the service, the same for all its requests (the service root is the request's). */
type ServiceBinding = Omit<WriteBinding, 'serviceRoot'>

const bindings = new WeakMap<RequestScope['services'], ServiceBinding>()

function writeBinding(scope: RequestScope): ServiceBinding {
  const { services } = scope
  let binding = bindings.get(services)
  if (!binding) {
    const { MaxTop, MaxNodeCount, MaxExpansionDepth, MaxBodyEntities, MaxCollectionMembers, DefaultSelect } = services.config.ApiOptions
    binding = {
      model: services.model,
      naming: services.naming,
      query: { maxTop: MaxTop, maxNodeCount: MaxNodeCount, maxExpansionDepth: MaxExpansionDepth },
      body: { maxEntities: MaxBodyEntities, maxCollectionMembers: MaxCollectionMembers },
      defaultSelect: DefaultSelect as DefaultSelect,
    }
    bindings.set(services, binding)
  }
  return binding
}

export function requestBody(ctx: Exchange): unknown {
  const body = (ctx.request as { body?: unknown }).body
  const empty = typeof body === 'object' && body !== null && Object.keys(body).length === 0
  if (body === undefined || (empty && !sentABody(ctx))) throw RequestError.invalid('The request needs a JSON body.')
  return body
}

/**
 * koa-body reads a request without a body as `{}`; a request with one says so in its head
 * (RFC 9112 §6.3), by its length or, streamed, by its Transfer-Encoding. A $batch part's body
 * is undefined when it has none, so a part's `{}` is one the client sent.
 */
function sentABody(ctx: Exchange): boolean {
  if (ctx instanceof PartExchange) return true
  const length = ctx.get('Content-Length')
  return (length !== '' && length !== '0') || ctx.get('Transfer-Encoding') !== ''
}

function prefers(ctx: Exchange, preference: string): boolean {
  return ctx.get('Prefer').split(',').some((p) => p.trim().toLowerCase() === preference)
}

/**
 * Writes to users, roles and their links change who may do what: once committed, every
 * instance must have heard it before the client is answered, so its next request, wherever
 * it lands, is judged by the new access (auth/access-service.ts `changed`). Inside a
 * workflow nothing is committed yet: the workflow's commit does this.
 */
async function afterWrite(scope: RequestScope, entity: EntityModel): Promise<void> {
  if (entity.system && !scope.state.session) await scope.services.access.changed(scope.session.tenant)
}
