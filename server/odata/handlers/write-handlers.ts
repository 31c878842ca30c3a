// POST (create, deep insert), PATCH/PUT (update) and DELETE (with cascades). Each applies
// the body to a unit of work, whose flush runs the business rules and writes it all in one
// statement; the reply then comes from the read path, so a write answers exactly as a read
// would.

import { RequestError } from '../../errors.ts'
import type { EntityModel } from '../../model/model.ts'
import { bindEntityRead } from '../semantic/bind-read.ts'
import type { BoundEntityRead } from '../semantic/bound.ts'
import { authorize, demand } from '../semantic/authorize.ts'
import { contextUrl, serviceRoot } from '../serializer/urls.ts'
import { createFromBody, nestedCreates, propertiesNamedIn, updateFromBody, type BodyContext } from './body-reader.ts'
import { parentsReachedBy } from '../../rules/dependencies.ts'
import { bindContextFor, parseReadOptions, readEntity } from './read-handler.ts'
import type { ApiContext, RequestScope } from './odata-routes.ts'
import type { Entry, ParentPrefetch, UnitOfWork } from '../../persistence/unit-of-work.ts'

export async function handleCreate(ctx: ApiContext, scope: RequestScope, entity: EntityModel): Promise<void> {
  requireSystemWritable(entity)
  const options = parseReadOptions(ctx.querystring, scope.services.config.ApiOptions.MaxNodeCount)
  const body = requestBody(ctx)
  const nested = nestedCreates(scope.services.naming, entity, body)
  for (const created of nested) requireSystemWritable(created.entity)
  const replyRead = bindReply(scope, entity, options)
  authorize(scope.state.access, { kind: 'create', entity, nested, reply: replyRead })
  const key = await scope.session.write(async (unit) => createFromBody(bodyContext(scope, unit), entity, body).key)
  afterWrite(scope, entity)
  const location = `${serviceRoot(ctx, scope.services)}${entity.setName}(${key})`
  if (prefers(ctx, 'return=minimal')) {
    ctx.status = 204
    ctx.set('OData-EntityId', location)
    ctx.set('Location', location)
    ctx.set('Preference-Applied', 'return=minimal')
    return
  }
  ctx.set('Location', location)
  await reply(ctx, scope, entity, key, options, replyRead, 200)
}

export async function handleUpdate(ctx: ApiContext, scope: RequestScope, entity: EntityModel, key: string, mode: 'patch' | 'put'): Promise<void> {
  requireSystemWritable(entity)
  const options = parseReadOptions(ctx.querystring, scope.services.config.ApiOptions.MaxNodeCount)
  const body = requestBody(ctx)
  const replyRead = bindReply(scope, entity, options)
  authorize(scope.state.access, { kind: 'update', entity, reply: replyRead })
  // A PUT replaces every property; a PATCH reaches the parents its properties feed.
  const reached = parentsReachedBy(scope.services.model, entity, mode === 'put' ? undefined : propertiesNamedIn(scope.services.naming, entity, body))
  await scope.session.write(async (unit) => {
    const record = await loadForWrite(unit, entity, key, ctx.get('If-Match'), reached)
    updateFromBody(bodyContext(scope, unit), entity, record, body, mode)
  })
  afterWrite(scope, entity)
  const wantsBody = options.select !== undefined || options.expand !== undefined || prefers(ctx, 'return=representation')
  if (!wantsBody) {
    ctx.status = 204
    return
  }
  if (prefers(ctx, 'return=representation')) ctx.set('Preference-Applied', 'return=representation')
  await reply(ctx, scope, entity, key, options, replyRead, 200)
}

export async function handleDelete(ctx: ApiContext, scope: RequestScope, entity: EntityModel, key: string): Promise<void> {
  requireSystemWritable(entity)
  authorize(scope.state.access, { kind: 'delete', entity })
  await scope.session.write(async (unit) => {
    const record = await loadForWrite(unit, entity, key, ctx.get('If-Match'), parentsReachedBy(scope.services.model, entity))
    await removeWithCascades(scope, unit, record)
  })
  afterWrite(scope, entity)
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
async function loadForWrite(unit: UnitOfWork, entity: EntityModel, key: string, ifMatch: string, parents: readonly ParentPrefetch[]): Promise<Entry> {
  const [record] = await unit.load([{ entity, key, parents }])
  if (record.state !== 'loaded' || record.removed) throw RequestError.notFound(`${entity.setName}(${key}) does not exist.`)
  if (ifMatch && ifMatch.trim() !== '*') {
    const current = `W/"${record.version}"`
    const accepted = ifMatch.split(',').map((tag) => tag.trim())
    if (!accepted.includes(current) && !accepted.includes(current.slice(2))) throw RequestError.preconditionFailed()
  }
  return record
}

/**
 * The reply's $select and $expand, bound before the write. The writer may lack read permission
 * on what it wrote, and the reply shows it all the same; what its $expand reaches is authorized
 * with the write (authorize.ts).
 */
function bindReply(scope: RequestScope, entity: EntityModel, options: ReturnType<typeof parseReadOptions>): BoundEntityRead {
  const context = bindContextFor(scope, options)
  return bindEntityRead(context, context.nextRange(entity), options.select, options.expand, scope.services.config.ApiOptions.DefaultSelect as 'Key', 1)
}

async function reply(
  ctx: ApiContext,
  scope: RequestScope,
  entity: EntityModel,
  key: string,
  options: ReturnType<typeof parseReadOptions>,
  read: BoundEntityRead,
  status: number,
): Promise<void> {
  const found = await readEntity(scope, { kind: 'entity', entity, key, read }, contextUrl(serviceRoot(ctx, scope.services), entity, options.select, false, true))
  if (!found) throw RequestError.notFound(`${entity.setName}(${key}) does not exist.`)
  ctx.status = status
  ctx.set('ETag', found.etag)
  ctx.type = 'application/json; odata.metadata=minimal'
  ctx.body = found.body
}

function bodyContext(scope: RequestScope, unit: UnitOfWork): BodyContext {
  return { unit, model: scope.services.model, naming: scope.services.naming }
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

/** Writes to users, roles and their links change who may do what: caches must forget. */
function afterWrite(scope: RequestScope, entity: EntityModel): void {
  if (entity.system) scope.services.access.invalidateTenant(scope.session.tenant.tenant)
}
