// The OData routes: everything under /api/ that is not a fixed system route. One
// catch-all parses the path, binds it, and hands it to the handler for its method.

import type Router from '@koa/router'
import type { Context } from 'koa'
import { RequestError, ServiceError } from '../../errors.ts'
import type { ApiState } from '../../http/api-state.ts'
import type { OdataServices } from './odata-services.ts'
import { parseResourcePath } from '../parser/resource-path-parser.ts'
import { bindPath, type Target } from '../semantic/bind-path.ts'
import { handleRead } from './read-handler.ts'
import { handleCreate, handleDelete, handleUpdate } from './write-handlers.ts'
import { handleMethod } from './method-handler.ts'
import { poolSession, type Session } from '../../persistence/session.ts'
import { DEFAULT_NAMESPACE as NAMESPACE } from '../metadata/build-csdl.ts'
import { DEFAULT_FORMAT, formatOption, negotiate, type JsonFormat, type Media } from './negotiate.ts'

export type ApiContext = Context & { state: ApiState }

/** Everything a handler needs for one request, resolved once. */
export interface RequestScope {
  readonly services: OdataServices
  readonly state: ApiState
  readonly session: Session
  readonly target: Target
  /** What the answer is written as (negotiate.ts): XML or text for $metadata and $count, else JSON. */
  readonly media: Media
  /** The JSON parameters the client asked for: odata.metadata, IEEE754Compatible. */
  readonly format: JsonFormat
}

export function odataRoutes(router: Router<ApiState>, services: OdataServices): void {
  router.all('/{*path}', async (ctx) => {
    const path = ctx.path.replace(/^\/api\/?/i, '')
    const target = bindPath(services.model, services.naming, parseResourcePath(path), NAMESPACE)
    const session = ctx.state.session ?? poolSession(ctx.state.tenant!, { signal: ctx.state.signal, heavy: isHeavyRead(ctx.method, target, ctx.querystring) })
    const method = ctx.method
    // A DELETE answers without a body, whatever the client accepts.
    const { media, json } = method === 'DELETE' ? { media: 'json' as const, json: DEFAULT_FORMAT } : negotiate(ctx.get('Accept'), formatOption(ctx.querystring), offeredMedia(target))
    const scope: RequestScope = { services, state: ctx.state, session, target, media, format: json }
    if (target.kind === 'method') return handleMethod(ctx as ApiContext, scope, target)
    if (method === 'GET' || method === 'HEAD') return handleRead(ctx as ApiContext, scope)
    const plain = (target.kind === 'collection' || target.kind === 'entity') && !target.parent && !target.ref
    if (plain && target.kind === 'collection' && !target.count && method === 'POST') return handleCreate(ctx as ApiContext, scope, target.entity)
    if (plain && target.kind === 'entity' && (method === 'PATCH' || method === 'PUT' || method === 'MERGE')) {
      return handleUpdate(ctx as ApiContext, scope, target.entity, target.key, method === 'PUT' ? 'put' : 'patch')
    }
    if (plain && target.kind === 'entity' && method === 'DELETE') return handleDelete(ctx as ApiContext, scope, target.entity, target.key)
    const unsupported = unsupportedWrite(target, method)
    if (unsupported) throw new ServiceError('NotImplemented', `${method} ${unsupported} is valid OData this service does not support yet.`, { target: method })
    throw RequestError.methodNotAllowed(method, ctx.path, allowedMethods(target))
  })
}

/**
 * Query options whose cost grows with the data a collection holds, as the parser takes them:
 * with or without `$` (or `%24`), in any case.
 */
const HEAVY_OPTION = /(?:^|&)(?:\$|%24)?(?:filter|expand|count|apply|orderby|search|skip)=/i

/**
 * Whether a read is heavy, for the tenant's fairness (tenancy/heavy-read-lane.ts): a
 * collection read (or its $count) that filters, expands, counts, aggregates, sorts or skips.
 * Key reads, plain pages of a collection, writes and methods stay in the cheap lane. Read
 * off the raw query string: parsing it into ctx.query cost a key read a tenth of its CPU.
 */
function isHeavyRead(method: string, target: Target, querystring: string): boolean {
  if ((method !== 'GET' && method !== 'HEAD') || target.kind !== 'collection') return false
  return target.count || HEAVY_OPTION.test(querystring)
}

/** What a resource can be written as, in the service's order of preference. */
function offeredMedia(target: Target): readonly Media[] {
  if (target.kind === 'metadata') return ['xml', 'json']
  // A count is plain text; a client asking for JSON gets it too, as many send one Accept for all.
  if (target.kind === 'collection' && target.count) return ['text', 'json']
  if (target.kind === 'property' && target.raw) return ['text']
  return ['json']
}

/**
 * Writes OData defines on a path that this service does not make (yet): what they are, for a
 * 501 rather than a 405 that would call a valid request wrong. Undefined for the others.
 */
function unsupportedWrite(target: Target, method: string): string | undefined {
  const write = method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE'
  if (!write) return undefined
  switch (target.kind) {
    case 'collection':
      if (target.ref) return method === 'POST' ? 'to a collection of references (adding a link)' : undefined
      return target.parent && !target.count && method === 'POST' ? 'to a collection-valued navigation (creating a related entity)' : undefined
    case 'entity':
      if (target.ref) return method === 'PUT' || method === 'DELETE' ? 'of a reference (setting or removing a link)' : undefined
      return target.parent && method !== 'POST' ? 'of an entity reached through a navigation property' : undefined
    case 'property':
      return method === 'PUT' || method === 'DELETE' ? 'of a single property' : undefined
    default:
      return undefined
  }
}

function allowedMethods(target: Target): string[] {
  switch (target.kind) {
    case 'collection':
      return target.parent || target.count || target.ref ? ['GET'] : ['GET', 'POST']
    case 'entity':
      return target.parent || target.ref ? ['GET'] : ['GET', 'PATCH', 'PUT', 'DELETE']
    default:
      return ['GET']
  }
}
