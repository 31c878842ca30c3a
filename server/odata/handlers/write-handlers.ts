// POST (create, deep insert), PATCH/PUT (update) and DELETE (with cascades). Each applies
// the body to a unit of work, whose flush runs the business rules and writes it all in one
// statement; the reply then comes from the read path, so a write answers exactly as a read
// would. Everything a write can be refused for is checked before its flush: the reply's query
// options are bound and If-Match is parsed before the unit of work opens; the permissions, the
// ETag and the body are checked in the unit before it writes. Permissions are checked in one
// stage (authorize.ts) on the bound write. A refused write writes nothing.

import { QueryError, RequestError } from '../../errors.ts'
import type { EntityModel } from '../../model/model.ts'
import { bindEntityRead } from '../semantic/bind-read.ts'
import type { BoundEntityRead } from '../semantic/bound.ts'
import { authorize, demand } from '../semantic/authorize.ts'
import { contextUrl, serviceRoot } from '../serializer/urls.ts'
import { checkBodyLimits, createFromBody, nestedCreates, propertiesNamedIn, updateFromBody, type BodyContext, type BodyLimits } from './body-reader.ts'
import { parentsReachedBy } from '../../rules/dependencies.ts'
import { bindContextFor, parseReadOptions, readEntity } from './read-handler.ts'
import type { ApiContext, RequestScope } from './odata-routes.ts'
import type { Entry, ParentPrefetch, UnitOfWork } from '../../persistence/unit-of-work.ts'

export async function handleCreate(ctx: ApiContext, scope: RequestScope, entity: EntityModel): Promise<void> {
  requireSystemWritable(entity)
  const reply = bindReply(ctx, scope, entity)
  const body = requestBody(ctx)
  // Measured before it is walked for what it creates: a body past the limits costs no more than one at them.
  checkBodyLimits(scope.services.naming, bodyLimits(scope), entity, body)
  const nested = nestedCreates(scope.services.naming, entity, body)
  for (const created of nested) requireSystemWritable(created.entity)
  authorize(scope.state.access, { kind: 'create', entity, nested, reply: reply.read })
  const key = await scope.session.write(async (unit) => createFromBody(bodyContext(scope, unit), entity, body).key)
  await afterWrite(scope, entity)
  const location = `${serviceRoot(ctx, scope.services)}${entity.setName}(${key})`
  const minimal = prefers(ctx, 'return=minimal')
  if (minimal || !(await answered(ctx, scope, reply, key))) {
    ctx.status = 204
    ctx.set('OData-EntityId', location)
    ctx.set('Location', location)
    if (minimal) ctx.set('Preference-Applied', 'return=minimal')
    return
  }
  ctx.set('Location', location)
}

export async function handleUpdate(ctx: ApiContext, scope: RequestScope, entity: EntityModel, key: string, mode: 'patch' | 'put'): Promise<void> {
  requireSystemWritable(entity)
  const reply = bindReply(ctx, scope, entity)
  const ifMatch = parseIfMatch(ctx.get('If-Match'))
  const body = requestBody(ctx)
  authorize(scope.state.access, { kind: 'update', entity, reply: reply.read })
  // A PUT replaces every property; a PATCH reaches the parents its properties feed.
  const reached = parentsReachedBy(scope.services.model, entity, mode === 'put' ? undefined : propertiesNamedIn(scope.services.naming, entity, body))
  await scope.session.write(async (unit) => {
    const record = await loadForWrite(unit, entity, key, ifMatch, reached)
    updateFromBody(bodyContext(scope, unit), entity, record, body, mode)
  })
  await afterWrite(scope, entity)
  const wantsBody = reply.options.select !== undefined || reply.options.expand !== undefined || prefers(ctx, 'return=representation')
  if (!wantsBody || !(await answered(ctx, scope, reply, key))) {
    ctx.status = 204
    return
  }
  if (prefers(ctx, 'return=representation')) ctx.set('Preference-Applied', 'return=representation')
}

export async function handleDelete(ctx: ApiContext, scope: RequestScope, entity: EntityModel, key: string): Promise<void> {
  requireSystemWritable(entity)
  // A DELETE answers with nothing, but its query options are a write's: bound, or refused.
  bindReply(ctx, scope, entity)
  const ifMatch = parseIfMatch(ctx.get('If-Match'))
  authorize(scope.state.access, { kind: 'delete', entity })
  await scope.session.write(async (unit) => {
    const record = await loadForWrite(unit, entity, key, ifMatch, parentsReachedBy(scope.services.model, entity))
    await removeWithCascades(scope, unit, record)
  })
  await afterWrite(scope, entity)
  ctx.status = 204
}

/**
 * Removes an entity and, first, what its references' onDelete asks for: cascade removes
 * the members, setNull clears their reference (restrict is checked by the rules on flush).
 * Members are loaded so the rules see them go (a parent's totals, for instance).
 */
async function removeWithCascades(scope: RequestScope, unit: UnitOfWork, record: Entry): Promise<void> {
  for (const property of record.entity.properties.values()) {
    if (property.kind !== 'collection') continue
    const inverse = property.inverse
    // Restricting references are judged by the rules engine, which sees the whole flush.
    if (inverse.onDelete === 'restrict') continue
    for (const member of await unit.find(property.target, { [inverse.name]: record.key })) {
      // Which members a delete reaches only the data says, so these are checked as they are found.
      if (inverse.onDelete === 'cascade') {
        demand(scope.state.access, { entity: property.target, permission: 'delete', by: `Deleting ${property.target.setName} by cascade from ${record.entity.setName}` })
        await removeWithCascades(scope, unit, member)
      } else {
        demand(scope.state.access, { entity: property.target, permission: 'update', by: `Clearing ${property.target.setName}.${inverse.name} of a deleted ${record.entity.name}` })
        member.values[inverse.name] = null
      }
    }
  }
  unit.remove(record)
}

/** The entity to change, with the parents its change will recompute (one statement). */
async function loadForWrite(unit: UnitOfWork, entity: EntityModel, key: string, ifMatch: readonly string[] | undefined, parents: readonly ParentPrefetch[]): Promise<Entry> {
  const [record] = await unit.load([{ entity, key, parents }])
  if (record.state !== 'loaded' || record.removed) throw RequestError.notFound(`${entity.setName}(${key}) does not exist.`)
  if (ifMatch) {
    const current = `W/"${record.version}"`
    if (!ifMatch.includes(current) && !ifMatch.includes(current.slice(2))) throw RequestError.preconditionFailed()
  }
  return record
}

/** Entity tags as If-Match lists them (RFC 9110 13.1.1); undefined for none or `*` (any). */
function parseIfMatch(header: string): readonly string[] | undefined {
  const text = header.trim()
  if (text === '' || text === '*') return undefined
  const tags = text.split(',').map((tag) => tag.trim())
  const wrong = tags.find((tag) => !/^(W\/)?"[^"]*"$/.test(tag))
  if (wrong !== undefined) {
    throw RequestError.invalid(`If-Match holds '${wrong}', which is not an entity tag: send the ETag of the entity (W/"<version>") or *.`, 'If-Match')
  }
  return tags
}

/** A write's reply, bound before anything is written. */
interface Reply {
  readonly options: ReturnType<typeof parseReadOptions>
  readonly entity: EntityModel
  readonly read: BoundEntityRead
  readonly context: string
}

/**
 * Parses and binds the reply's query options as a read of the written entity would: a write
 * whose reply cannot be given ($expand=Nope, $filter on one entity) is refused before it
 * writes, not after, which would answer an error for a saved entity.
 */
function bindReply(ctx: ApiContext, scope: RequestScope, entity: EntityModel): Reply {
  const options = parseReadOptions(ctx.querystring, scope.services.config.ApiOptions.MaxNodeCount)
  if (options.filter || options.orderby || options.top !== undefined || options.skip !== undefined || options.apply || options.count !== undefined) {
    throw QueryError.invalid('$filter, $orderby, $top, $skip, $count and $apply apply to collections; a write answers with one entity.')
  }
  // The writer may lack read permission on what it wrote, and the reply shows it all the same;
  // what its $expand reaches is authorized with the write (authorize.ts).
  const context = bindContextFor(scope, options)
  const read = bindEntityRead(context, context.nextRange(entity), options.select, options.expand, scope.services.config.ApiOptions.DefaultSelect as 'Key', 1)
  return { options, entity, read, context: contextUrl(serviceRoot(ctx, scope.services), entity, options.select, false, true) }
}

/**
 * Reads the written entity through the read path and answers with it (200, ETag); false when
 * it cannot. The write is saved by then, so its answer must say so: a reply whose statement
 * fails on the data (a cast in an expanded $filter, the database gone a moment) or finds the
 * entity deleted meanwhile leaves the caller to answer 204, as for return=minimal, rather than
 * an error a client would retry into a duplicate. What went wrong is logged. (Everything that
 * can be checked without the data was bound before the write: bindReply.)
 */
async function answered(ctx: ApiContext, scope: RequestScope, reply: Reply, key: string): Promise<boolean> {
  let found: Awaited<ReturnType<typeof readEntity>>
  try {
    found = await readEntity(scope, { kind: 'entity', entity: reply.entity, key, read: reply.read }, reply.context)
  } catch (error) {
    // In a workflow (a session of its own) nothing is saved before the commit, and the failed
    // statement spoiled its transaction: the error stands, and the request is not recorded.
    if (scope.state.session) throw error
    scope.state.log.warn({ err: error }, 'write saved; its reply could not be read')
    return false
  }
  if (!found) return false
  ctx.status = 200
  ctx.set('ETag', found.etag)
  ctx.type = 'application/json; odata.metadata=minimal'
  ctx.body = found.body
  return true
}

function bodyContext(scope: RequestScope, unit: UnitOfWork): BodyContext {
  return { unit, model: scope.services.model, naming: scope.services.naming, limits: bodyLimits(scope) }
}

function bodyLimits(scope: RequestScope): BodyLimits {
  const { MaxBodyEntities, MaxCollectionMembers } = scope.services.config.ApiOptions
  return { maxEntities: MaxBodyEntities, maxCollectionMembers: MaxCollectionMembers }
}

export function requestBody(ctx: ApiContext): unknown {
  const body = (ctx.request as { body?: unknown }).body
  if (body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0 && !ctx.get('Content-Length'))) {
    throw RequestError.invalid('The request needs a JSON body.')
  }
  return body
}

/** Responsibilities come from plugins: `responsibility sync` owns that table. */
function requireSystemWritable(entity: EntityModel): void {
  if (entity.name === 'Responsibility') {
    throw RequestError.methodNotAllowed('write', 'Responsibilities', ['GET'])
  }
}

function prefers(ctx: ApiContext, preference: string): boolean {
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
