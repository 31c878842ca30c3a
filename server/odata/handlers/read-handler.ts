// GET: the service document, $metadata, a collection (with its count, its page and the
// next link), one entity (with its ETag), or a plain-text count. A read is a straight line:
// parse → bind → authorize → compile → one statement → (virtual properties) → body. Parse,
// bind, authorize and compile run once per shape of read and caller (read-plans.ts).

import { QueryError, RequestError } from '../../errors.ts'
import { MAX_TREE_DEPTH, measureQuery } from '../parser/node-count.ts'
import { treeTooDeep } from '../parser/parse-errors.ts'
import { parseQueryOptions } from '../parser/query-options-parser.ts'
import type { QueryOptionsSyntax } from '../parser/syntax.ts'
import { createBindContext, type BindContext } from '../semantic/bind-context.ts'
import { bindCollectionRead, bindEntityRead, type DefaultSelect } from '../semantic/bind-read.ts'
import type { BoundCollectionRead, BoundEntityByKey } from '../semantic/bound.ts'
import type { Target } from '../semantic/bind-path.ts'
import { authorize, type BoundRead } from '../semantic/authorize.ts'
import { compileCollectionRead, compileCount, compileEntityRead } from '../sql/compile-read.ts'
import { finishEntities } from '../serializer/finish-entities.ts'
import { contextUrl, serviceRoot } from '../serializer/urls.ts'
import { serviceDocument } from '../serializer/service-document.ts'
import { metadataDocument } from '../metadata/metadata-document.ts'
import type { ApiContext, RequestScope } from './odata-routes.ts'
import type { PlannedRead } from './read-plans.ts'

const JSON_TYPE = 'application/json; odata.metadata=minimal; odata.streaming=true'

export async function handleRead(ctx: ApiContext, scope: RequestScope): Promise<void> {
  const { target, services } = scope
  if (target.kind === 'serviceDocument' || target.kind === 'metadata') authorize(scope.state.access, { kind: 'model' })
  if (target.kind === 'serviceDocument') {
    ctx.type = JSON_TYPE
    ctx.body = serviceDocument(services.model, serviceRoot(ctx, services))
    return
  }
  if (target.kind === 'metadata') {
    const json = ctx.query.$format === 'json' || (ctx.accepts('application/xml', 'application/json') === 'application/json' && !/xml/.test(ctx.get('Accept')))
    const document = metadataDocument(services, json ? 'json' : 'xml', ctx.response.get('OData-Version') === '4.01' ? '4.01' : '4.0')
    ctx.type = json ? 'application/json; charset=utf-8' : 'application/xml; charset=utf-8'
    ctx.body = document
    return
  }
  if (target.kind === 'collection' && target.count) {
    const count = compileCount(bindRead(scope, target, parseReadOptions(ctx.querystring, services.config.ApiOptions.MaxNodeCount)))
    const [row] = await scope.session.query<{ body: string }>(count.sql, count.params)
    ctx.type = 'text/plain'
    ctx.body = row.body
    return
  }
  if (target.kind === 'method') throw new Error('odata-routes.ts hands methods to method-handler.ts')
  const inputs = { keys: pathKeys(target), root: serviceRoot(ctx, services) }
  const planned = services.readPlans.read(scope.state.access, readShape(target, ctx.querystring), inputs, (given) =>
    planRead(scope, withPathKeys(target, given.keys), ctx.querystring, given.root),
  )
  if (!planned.single) {
    ctx.type = JSON_TYPE
    ctx.body = await runCollectionRead(scope, planned, ctx)
    return
  }
  const found = await runEntityRead(scope, planned)
  if (!found) throw RequestError.notFound(`${target.entity.setName}(${(target.kind === 'entity' && target.key) || '…'}) does not exist.`)
  ctx.set('ETag', found.etag)
  ctx.type = JSON_TYPE
  ctx.body = found.body
}

type ReadTarget = Extract<Target, { kind: 'collection' | 'entity' }>

/** Parse → bind → authorize → compile of a collection or entity read, for a root and the path's keys. */
function planRead(scope: RequestScope, target: ReadTarget, querystring: string, root: string): PlannedRead {
  const options = parseReadOptions(querystring, scope.services.config.ApiOptions.MaxNodeCount)
  const read = bindRead(scope, target, options)
  if (read.kind === 'collection') {
    const compiled = compileCollectionRead(read, { context: contextUrl(root, target.entity, options.select, options.apply !== undefined) })
    return { single: false, read: read.read, ...compiled }
  }
  return { single: true, read: read.read, ...compileEntityRead(read, { context: contextUrl(root, target.entity, options.select, false, true) }) }
}

/**
 * Binds a collection, a count or one entity with the query options, and authorizes it: every
 * read passes here before it is compiled. A plan keeps the outcome for its caller only
 * (read-plans.ts), so the check holds for the plan's reuse.
 */
function bindRead(scope: RequestScope, target: Extract<Target, { kind: 'collection' }>, options: QueryOptionsSyntax): BoundCollectionRead
function bindRead(scope: RequestScope, target: ReadTarget, options: QueryOptionsSyntax): BoundRead
function bindRead(scope: RequestScope, target: ReadTarget, options: QueryOptionsSyntax): BoundRead {
  const read = target.kind === 'collection' ? bindCollection(scope, target, options) : bindEntity(scope, target, options)
  authorize(scope.state.access, { kind: 'read', read })
  return read
}

function bindCollection(scope: RequestScope, target: Extract<Target, { kind: 'collection' }>, options: QueryOptionsSyntax): BoundCollectionRead {
  return { ...bindCollectionRead(bindContextFor(scope, options), target.entity, options, defaultSelect(scope)), parent: target.parent }
}

function bindEntity(scope: RequestScope, target: Extract<Target, { kind: 'entity' }>, options: QueryOptionsSyntax): BoundEntityByKey {
  const context = bindContextFor(scope, options)
  const read: BoundEntityByKey = {
    kind: 'entity',
    entity: target.entity,
    key: target.key,
    parent: target.parent,
    read: bindEntityRead(context, context.nextRange(target.entity), options.select, options.expand, defaultSelect(scope), 1),
  }
  if (options.filter || options.orderby || options.top !== undefined || options.skip !== undefined || options.apply) {
    throw QueryError.invalid('$filter, $orderby, $top, $skip and $apply apply to collections, not to a single entity.')
  }
  return read
}

function defaultSelect(scope: RequestScope): DefaultSelect {
  return scope.services.config.ApiOptions.DefaultSelect as DefaultSelect
}

/** What makes two reads the same statement but for their keys: the path's shape and the query options. */
function readShape(target: ReadTarget, querystring: string): string {
  const parent = target.parent ? `${target.parent.navigation.entity.name}.${target.parent.navigation.name}` : ''
  return `${target.kind} ${target.entity.name} ${parent}?${querystring}`
}

function pathKeys(target: ReadTarget): string[] {
  return [target.parent?.key, target.kind === 'entity' ? target.key : undefined].filter((key): key is string => Boolean(key))
}

function withPathKeys(target: ReadTarget, keys: readonly string[]): ReadTarget {
  const parent = target.parent && { ...target.parent, key: keys[0] }
  if (target.kind === 'collection') return { ...target, parent }
  return { ...target, parent, key: target.key ? keys[keys.length - 1] : target.key }
}

export function parseReadOptions(querystring: string, maxNodeCount: number): QueryOptionsSyntax {
  const options = parseQueryOptions(querystring)
  const { nodes, depth } = measureQuery(options)
  if (nodes > maxNodeCount) throw QueryError.limitExceeded('MaxNodeCount', nodes, maxNodeCount)
  if (depth > MAX_TREE_DEPTH) throw treeTooDeep(depth, MAX_TREE_DEPTH)
  return options
}

export function bindContextFor(scope: RequestScope, options: QueryOptionsSyntax): BindContext {
  const { ApiOptions } = scope.services.config
  return createBindContext(
    scope.services.naming,
    { maxTop: ApiOptions.MaxTop, maxNodeCount: ApiOptions.MaxNodeCount, maxExpansionDepth: ApiOptions.MaxExpansionDepth },
    options.aliases,
  )
}

/** Runs a collection read; adds @odata.nextLink when the server paged it. */
export async function readCollection(scope: RequestScope, read: BoundCollectionRead, context: string, ctx?: ApiContext): Promise<string> {
  return runCollectionRead(scope, { read: read.read, ...compileCollectionRead(read, { context }) }, ctx)
}

export async function readEntity(scope: RequestScope, read: BoundEntityByKey, context: string): Promise<{ body: string; etag: string } | undefined> {
  return runEntityRead(scope, { read: read.read, ...compileEntityRead(read, { context }) })
}

/** A read's statement with what finishing its body needs. */
type ReadStatement = Omit<PlannedRead, 'single'>

async function runCollectionRead(scope: RequestScope, statement: ReadStatement, ctx?: ApiContext): Promise<string> {
  logStatement(scope, statement.sql)
  const [row] = await scope.session.query<{ body: string; more?: boolean }>(statement.sql, statement.params)
  let body = finishEntities(row.body, statement.read, scope.session.tenant.cipher)
  if (row.more && statement.nextSkip !== undefined && ctx) {
    body = `${body.slice(0, -1)},"@odata.nextLink":${JSON.stringify(nextLink(ctx, scope.services, statement.nextSkip))}}`
  }
  return body
}

async function runEntityRead(scope: RequestScope, statement: ReadStatement): Promise<{ body: string; etag: string } | undefined> {
  logStatement(scope, statement.sql)
  const [row] = await scope.session.query<{ body: string; etag: string }>(statement.sql, statement.params)
  if (!row) return undefined
  return { body: finishEntities(row.body, statement.read, scope.session.tenant.cipher, true), etag: row.etag }
}

/**
 * The request again, from the next page on: the client's own options as it wrote them (so
 * their encoding survives), without $skip or $skiptoken, then `$skiptoken`. The base is the
 * service root, so Server:PublicUrl applies as it does to @odata.context.
 */
function nextLink(ctx: ApiContext, services: RequestScope['services'], skip: number): string {
  const kept = ctx.querystring.split('&').filter((option) => option !== '' && !isPagingOption(option))
  const resource = ctx.path.replace(/^\/api\//i, '')
  return `${serviceRoot(ctx, services)}${resource}?${[...kept, `$skiptoken=${skip}`].join('&')}`
}

function isPagingOption(option: string): boolean {
  const equals = option.indexOf('=')
  let name: string
  try {
    name = decodeURIComponent(equals < 0 ? option : option.slice(0, equals)).toLowerCase()
  } catch {
    return false
  }
  return ['$skip', 'skip', '$skiptoken', 'skiptoken'].includes(name)
}

/** At debug level, the statement of each read (without its values), for EXPLAIN and index design. */
function logStatement(scope: RequestScope, sql: string): void {
  if (scope.state.logs('debug')) scope.state.log.debug({ sql }, 'read statement')
}
