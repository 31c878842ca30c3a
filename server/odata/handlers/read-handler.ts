// GET: the service document, $metadata, a collection (with its count, its page and the
// next link), one entity (with its ETag), or a plain-text count. A read is a straight line:
// parse → bind → authorize → plan → compile → one statement → (virtual properties) → body.
// Parse, bind, authorize, plan and compile run once per shape of read and caller
// (plan/read-plan-cache.ts). A read that could answer with more than
// ApiOptions:MaxResultItems entities is refused when planned; a collection's answer is written
// as its rows come, within ApiOptions:MaxResponseBytes (collection-answer.ts).

import { QueryError, RequestError } from '../../errors.ts'
import { MAX_TREE_DEPTH, measureQuery } from '../parser/node-count.ts'
import { treeTooDeep } from '../parser/parse-errors.ts'
import { parseQueryOptions } from '../parser/query-options-parser.ts'
import type { QueryOptionsSyntax } from '../parser/syntax.ts'
import { createBindContext, type BindContext } from '../semantic/bind-context.ts'
import { bindTargetRead, type DefaultSelect, type ReadTarget } from '../semantic/bind-read.ts'
import type { BoundCollectionRead, BoundEntityByKey } from '../semantic/bound.ts'
import { authorize, type BoundRead } from '../semantic/authorize.ts'
import { planCollectionRead, planCount, planEntityRead, type CollectionPlan, type EntityPlan, type ReadPlanLimits } from '../plan/read-plan.ts'
import type { PreparedRead } from '../plan/read-plan-cache.ts'
import { compileCollectionRead, compileCount, compileEntityRead, type CompiledRead } from '../sql/compile-read.ts'
import { finishEntities, needsFinishing } from '../serializer/finish-entities.ts'
import { entityAnswer } from '../serializer/entity-answer.ts'
import { contextPath, serviceRoot } from '../serializer/urls.ts'
import { BATCH_ROWS, collectionAnswer, tooLarge } from './collection-answer.ts'
import type { RowCursor, TextRow } from '../../persistence/row-cursor.ts'
import type { Readable } from 'node:stream'
import { serviceDocument } from '../serializer/service-document.ts'
import { metadataDocument } from '../metadata/metadata-document.ts'
import type { ApiContext, RequestScope } from './odata-routes.ts'

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
  if (target.kind === 'method') throw new Error('odata-routes.ts hands methods to method-handler.ts')
  const prepared = services.readPlans.read(scope.state.access, readShape(target, ctx.querystring), pathKeys(target), () => prepareRead(scope, target, ctx.querystring))
  const { plan, statement } = prepared
  if (plan.kind === 'count') {
    const [row] = await scope.session.query<{ body: string }>(statement.sql, statement.params)
    ctx.type = 'text/plain'
    ctx.body = row.body
    return
  }
  const context = serviceRoot(ctx, services) + prepared.contextPath
  if (plan.kind === 'collection') {
    ctx.type = JSON_TYPE
    ctx.body = await runCollectionRead(scope, plan, statement, context, ctx)
    return
  }
  const found = await runEntityRead(scope, plan, statement, context)
  if (!found) throw RequestError.notFound(`${target.entity.setName}(${(target.kind === 'entity' && target.key) || '…'}) does not exist.`)
  ctx.set('ETag', found.etag)
  ctx.type = JSON_TYPE
  ctx.body = found.body
}

/** Parse → bind → authorize → plan → compile of a collection, a count or one entity. */
function prepareRead(scope: RequestScope, target: ReadTarget, querystring: string): PreparedRead {
  const { MaxNodeCount, MaxResponseBytes: maxBytes } = scope.services.config.ApiOptions
  const options = parseReadOptions(querystring, MaxNodeCount)
  const read = bindRead(scope, target, options)
  if (read.kind === 'collection') {
    if (target.kind === 'collection' && target.count) {
      const plan = planCount(read)
      return { plan, statement: compileCount(plan), contextPath: '' }
    }
    const plan = planCollectionRead(read, planLimits(scope))
    return { plan, statement: compileCollectionRead(plan, maxBytes), contextPath: contextPath(target.entity, options.select, options.apply !== undefined) }
  }
  const plan = planEntityRead(read, planLimits(scope))
  return { plan, statement: compileEntityRead(plan, maxBytes), contextPath: contextPath(target.entity, options.select, false, true) }
}

function planLimits(scope: RequestScope): ReadPlanLimits {
  const { MaxTop, MaxResultItems } = scope.services.config.ApiOptions
  return { maxTop: MaxTop, maxResultItems: MaxResultItems }
}

/**
 * Binds a collection, a count or one entity with the query options, and authorizes it: every
 * read passes here before it is planned. The cache keeps the outcome for its caller only
 * (plan/read-plan-cache.ts), so the check holds for its reuse.
 */
function bindRead(scope: RequestScope, target: ReadTarget, options: QueryOptionsSyntax): BoundRead {
  const read = bindTargetRead(bindContextFor(scope, options), target, options, defaultSelect(scope))
  authorize(scope.state.access, { kind: 'read', read })
  return read
}

function defaultSelect(scope: RequestScope): DefaultSelect {
  return scope.services.config.ApiOptions.DefaultSelect as DefaultSelect
}

/** What makes two reads the same statement but for their keys: the path's shape and the query options. */
function readShape(target: ReadTarget, querystring: string): string {
  const parent = target.parent ? `${target.parent.navigation.entity.name}.${target.parent.navigation.name}` : ''
  const kind = target.kind === 'collection' && target.count ? 'count' : target.kind
  return `${kind} ${target.entity.name} ${parent}?${querystring}`
}

/** The keys of the resource path, in the order the plan takes them (read-plan.ts, pathKeys). */
function pathKeys(target: ReadTarget): string[] {
  if (target.parent) return [target.parent.key]
  return target.kind === 'entity' ? [target.key] : []
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

/**
 * Plans and runs a collection read (a method's result); its answer is a string, or a stream
 * when it is longer than a batch and `ctx` can take one. Adds @odata.nextLink when the server paged it.
 */
export async function readCollection(scope: RequestScope, read: BoundCollectionRead, context: string, ctx?: ApiContext): Promise<string | Readable> {
  const plan = planCollectionRead(read, planLimits(scope))
  return runCollectionRead(scope, plan, compileCollectionRead(plan, scope.services.config.ApiOptions.MaxResponseBytes), context, ctx)
}

/** Plans and runs a read of one entity (a write's or a method's reply). */
export async function readEntity(scope: RequestScope, read: BoundEntityByKey, context: string): Promise<{ body: string; etag: string } | undefined> {
  const plan = planEntityRead(read, planLimits(scope))
  return runEntityRead(scope, plan, compileEntityRead(plan, scope.services.config.ApiOptions.MaxResponseBytes), context)
}

async function runCollectionRead(scope: RequestScope, plan: CollectionPlan, statement: CompiledRead, context: string, ctx?: ApiContext): Promise<string | Readable> {
  logStatement(scope, statement.sql)
  const { session, services, state } = scope
  const read = plan.entity.read
  // A workflow keeps its answers whole (they are stored): its session has no cursor.
  const cursor = session.cursor
    ? await session.cursor(statement.sql, statement.params, { batchRows: BATCH_ROWS, rowsAtMost: plan.maxRows, maxBytes: services.config.ApiOptions.MaxResponseBytes })
    : wholeCursor(await session.query<Record<string, unknown>>(statement.sql, statement.params))
  const nextSkip = plan.serverPage?.nextSkip
  const shape = {
    context,
    maxBytes: services.config.ApiOptions.MaxResponseBytes,
    // Asked once per read, not per entity: most reads pass their rows through untouched.
    finish: needsFinishing(read) ? (body: string) => finishEntities(body, read, session.tenant.cipher, true) : (body: string) => body,
    nextLink: () => (ctx && nextSkip !== undefined ? nextLink(ctx, services, nextSkip) : undefined),
  }
  return collectionAnswer(cursor, shape, state.log, Boolean(ctx && session.cursor))
}

async function runEntityRead(scope: RequestScope, plan: EntityPlan, statement: CompiledRead, context: string): Promise<{ body: string; etag: string } | undefined> {
  logStatement(scope, statement.sql)
  const [row] = await scope.session.query<{ body: string | null; etag: string }>(statement.sql, statement.params)
  if (!row) return undefined
  if (row.body === null) throw tooLarge(scope.services.config.ApiOptions.MaxResponseBytes, 0)
  return { body: entityAnswer(context, finishEntities(row.body, plan.entity.read, scope.session.tenant.cipher, true)), etag: row.etag }
}

/** Rows already read whole, as a cursor of one batch (text values, as a cursor gives them). */
function wholeCursor(rows: readonly Record<string, unknown>[]): RowCursor {
  const text = (value: unknown) => (value === null || value === undefined ? null : typeof value === 'boolean' ? (value ? 't' : 'f') : String(value))
  const batch = { rows: rows.map((row): TextRow => Object.fromEntries(Object.entries(row).map(([name, value]) => [name, text(value)]))), done: true }
  return { next: async () => batch, close() {} }
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
