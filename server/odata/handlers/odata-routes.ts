// The OData routes: everything under /api/ that is not a fixed system route. One
// catch-all parses the path, binds it, and hands it to the handler for its method.

import type Router from '@koa/router'
import type { Context } from 'koa'
import { RequestError } from '../../errors.ts'
import type { ApiState } from '../../http/api-state.ts'
import type { OdataServices } from './odata-services.ts'
import { parseResourcePath } from '../parser/resource-path-parser.ts'
import { bindPath, type Target } from '../semantic/bind-path.ts'
import { handleRead } from './read-handler.ts'
import { handleCreate, handleDelete, handleUpdate } from './write-handlers.ts'
import { handleMethod } from './method-handler.ts'
import { poolSession, type Session } from '../../persistence/session.ts'
import { DEFAULT_NAMESPACE as NAMESPACE } from '../metadata/build-csdl.ts'

export type ApiContext = Context & { state: ApiState }

/** Everything a handler needs for one request, resolved once. */
export interface RequestScope {
  readonly services: OdataServices
  readonly state: ApiState
  readonly session: Session
  readonly target: Target
}

export function odataRoutes(router: Router<ApiState>, services: OdataServices): void {
  router.all('/{*path}', async (ctx) => {
    const path = ctx.path.replace(/^\/api\/?/i, '')
    const target = bindPath(services.model, services.naming, parseResourcePath(path), NAMESPACE)
    const session = ctx.state.session ?? poolSession(ctx.state.tenant!, { signal: ctx.state.signal, heavy: isHeavyRead(ctx.method, target, ctx.querystring) })
    const scope: RequestScope = { services, state: ctx.state, session, target }
    const method = ctx.method
    if (target.kind === 'method') return handleMethod(ctx as ApiContext, scope, target)
    if (method === 'GET' || method === 'HEAD') return handleRead(ctx as ApiContext, scope)
    if (target.kind === 'collection' && !target.parent && !target.count && method === 'POST') return handleCreate(ctx as ApiContext, scope, target.entity)
    if (target.kind === 'entity' && !target.parent && (method === 'PATCH' || method === 'PUT' || method === 'MERGE')) {
      return handleUpdate(ctx as ApiContext, scope, target.entity, target.key, method === 'PUT' ? 'put' : 'patch')
    }
    if (target.kind === 'entity' && !target.parent && method === 'DELETE') return handleDelete(ctx as ApiContext, scope, target.entity, target.key)
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

function allowedMethods(target: Target): string[] {
  switch (target.kind) {
    case 'collection':
      return target.parent || target.count ? ['GET'] : ['GET', 'POST']
    case 'entity':
      return target.parent ? ['GET'] : ['GET', 'PATCH', 'PUT', 'DELETE']
    default:
      return ['GET']
  }
}
