// The OData stage: every request under /api/ that no fixed route took (app.ts). It parses
// the path, binds it, and hands it to the handler for its method; a $batch hands each of its
// parts back here.

import type { Middleware } from 'koa'
import { RequestError, ServiceError } from '../../errors.ts'
import type { ApiState } from '../../http/api-state.ts'
import type { OdataServices } from './odata-services.ts'
import { parseResourcePath } from '../parser/resource-path-parser.ts'
import { bindPath, type Target } from '../semantic/bind-path.ts'
import { handleRead } from './read-handler.ts'
import { handleCreate, handleDelete, handleLink, handleUpdate } from './write-handlers.ts'
import { handleMethod } from './method-handler.ts'
import { poolSession } from '../../persistence/session.ts'
import { DEFAULT_NAMESPACE as NAMESPACE } from '../metadata/build-csdl.ts'
import { handleBatch } from './batch-handler.ts'
import { DEFAULT_FORMAT, formatOption, negotiate, type Media } from './negotiate.ts'
import type { ApiContext, Exchange, RequestScope } from './exchange.ts'

export function odataRoute(services: OdataServices): Middleware<ApiState> {
  return async (ctx) => {
    const api = ctx as unknown as ApiContext
    if (BATCH_PATH.test(ctx.path)) return handleBatch(api, services, dispatch)
    return dispatch(api, services)
  }
}

const BATCH_PATH = /^\/api\/\$batch\/?$/i

/** Binds the exchange's path and hands it to the handler for its method: a request, or a part of a batch. */
export async function dispatch(ctx: Exchange, services: OdataServices): Promise<void> {
  const path = ctx.path.replace(/^\/api\/?/i, '')
  const target = bindPath(services.model, services.naming, parseResourcePath(path), NAMESPACE)
  const session = ctx.state.session ?? poolSession(ctx.state.tenant!, { signal: ctx.state.signal, heavy: isHeavyRead(ctx.method, target, ctx.querystring) })
  const method = ctx.method
  // A DELETE answers without a body, whatever the client accepts.
  const { media, json } = method === 'DELETE' ? { media: 'json' as const, json: DEFAULT_FORMAT } : negotiate(ctx.get('Accept'), formatOption(ctx.querystring), offeredMedia(target))
  const scope: RequestScope = { services, state: ctx.state, session, target, media, format: json }
  if (target.kind === 'method') return handleMethod(ctx, scope, target)
  if (method === 'GET' || method === 'HEAD') return handleRead(ctx, scope)
  if ((target.kind === 'collection' || target.kind === 'entity') && target.ref && target.parent) {
    const { navigation, key } = target.parent
    // `Customers(k)/Orders(m)/$ref` names the member in its path, as `…/Orders/$ref?$id=Orders(m)` does: DELETE alone applies.
    const member = target.kind === 'entity' && target.key ? `${target.entity.setName}(${target.key})` : undefined
    if (member) {
      if (method === 'DELETE') return handleLink(ctx, scope, navigation, key, 'unlink', member)
    } else {
      // A reference's link is set by PUT, a collection's member added by POST; either is removed by DELETE.
      const sets = navigation.kind === 'reference' ? method === 'PUT' : method === 'POST'
      if (sets || method === 'DELETE') return handleLink(ctx, scope, navigation, key, sets ? 'link' : 'unlink')
    }
  }
  const plain = (target.kind === 'collection' || target.kind === 'entity') && !target.parent && !target.ref
  if (target.kind === 'collection' && !target.count && !target.ref && method === 'POST') {
    const { parent } = target
    if (!parent) return handleCreate(ctx, scope, target.entity)
    if (parent.navigation.kind === 'collection') return handleCreate(ctx, scope, target.entity, { navigation: parent.navigation, key: parent.key })
  }
  if (plain && target.kind === 'entity' && (method === 'PATCH' || method === 'PUT' || method === 'MERGE')) {
    return handleUpdate(ctx, scope, target.entity, target.key, method === 'PUT' ? 'put' : 'patch')
  }
  if (plain && target.kind === 'entity' && method === 'DELETE') return handleDelete(ctx, scope, target.entity, target.key)
  const unsupported = unsupportedWrite(target, method)
  if (unsupported) throw new ServiceError('NotImplemented', `${method} ${unsupported} is valid OData this service does not support yet.`, { target: method })
  throw RequestError.methodNotAllowed(method, ctx.path, allowedMethods(target))
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
  // A count is plain text; a client asking for JSON gets it too, as many send one Accept for all
  // (the SAP Cloud SDK's count()): OData negotiates nothing for a count (URL Conventions §4.8),
  // and RFC 9110 §12.5.1 lets a service answer so rather than 406.
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
      return target.ref && !target.parent && method === 'POST' ? 'to a collection of references (adding a link)' : undefined
    case 'entity':
      if (target.ref) return !target.parent && (method === 'PUT' || method === 'DELETE') ? 'of a reference (setting or removing a link)' : undefined
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
      if (target.ref) return target.parent ? ['GET', 'POST', 'DELETE'] : ['GET']
      return target.count ? ['GET'] : ['GET', 'POST']
    case 'entity':
      if (target.ref) return target.parent ? (target.key ? ['GET', 'DELETE'] : ['GET', 'PUT', 'DELETE']) : ['GET']
      return target.parent ? ['GET'] : ['GET', 'PATCH', 'PUT', 'DELETE']
    default:
      return ['GET']
  }
}
