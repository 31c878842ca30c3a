// GET: the service document, $metadata, a collection (with its count, its page and the
// next link), one entity or one property (or its raw $value) with the entity's ETag, 304 for a
// current If-None-Match, references ($ref), or a plain-text count. The JSON is written as negotiate.ts
// decided (odata.metadata, IEEE754Compatible). A read is a straight line:
// parse → bind → authorize → plan → compile → one statement → (virtual properties) → body.
// Parse, bind, authorize, plan and compile run once per shape of read and caller
// (plan/read-plan-cache.ts). A read that could answer with more than
// ApiOptions:MaxResultItems entities is refused when planned; a collection's answer is written
// as its rows come, within ApiOptions:MaxResponseBytes (collection-answer.ts).

import { QueryError, RequestError, type ServiceError } from '../../errors.ts'
import { MAX_TREE_DEPTH, measureQuery } from '../parser/node-count.ts'
import { treeTooDeep } from '../parser/parse-errors.ts'
import { parseQueryOptions } from '../parser/query-options-parser.ts'
import type { QueryOptionsSyntax } from '../parser/syntax.ts'
import { createBindContext, type BindContext } from '../semantic/bind-context.ts'
import { bindTargetRead, type DefaultSelect, type ReadTarget } from '../semantic/bind-read.ts'
import type { BoundCollectionRead, BoundEntityByKey, ParentLink } from '../semantic/bound.ts'
import { authorize, type BoundRead } from '../semantic/authorize.ts'
import { planCollectionRead, planCount, planEntityRead, type CollectionPlan, type EntityPlan, type ReadPlanLimits } from '../plan/read-plan.ts'
import type { PreparedRead } from '../plan/read-plan-cache.ts'
import { compileCollectionRead, compileCount, compileEntityRead, compileParentExists, type CompiledRead } from '../sql/compile-read.ts'
import { finishEntities, needsFinishing, type Finishing } from '../serializer/finish-entities.ts'
import { entityAnswer } from '../serializer/entity-answer.ts'
import { typeAnnotation } from '../serializer/type-annotation.ts'
import { applyList, projectedContextPath, selectList, serviceRoot } from '../serializer/urls.ts'
import { KEY, type EntityModel } from '../../model/model.ts'
import type { Target } from '../semantic/bind-path.ts'
import { DEFAULT_FORMAT, jsonContentType, preferredPageSize, type JsonFormat } from './negotiate.ts'
import type { JsonOutput } from '../sql/sql-builder.ts'
import { declaredPropertyType, DEFAULT_NAMESPACE as NAMESPACE } from '../metadata/build-csdl.ts'
import { BATCH_ROWS, collectionAnswer, tooLarge } from './collection-answer.ts'
import type { RowCursor, TextRow } from '../../persistence/row-cursor.ts'
import type { RowReadBack } from '../../persistence/session.ts'
import type { Readable } from 'node:stream'
import { serviceDocument } from '../serializer/service-document.ts'
import { printedDocument } from '../metadata/metadata-document.ts'
import type { Exchange, RequestScope } from './exchange.ts'

export async function handleRead(ctx: Exchange, scope: RequestScope): Promise<void> {
  const { target, services } = scope
  if (target.kind === 'serviceDocument' || target.kind === 'metadata') {
    authorize(scope.state.access, { kind: 'model' })
    // They take no query option but $format; the others are checked as on any read, so that
    // a $format given twice is refused here too.
    parseReadOptions(ctx.querystring, services.config.ApiOptions.MaxNodeCount)
  }
  if (target.kind === 'serviceDocument') {
    ctx.type = jsonContentType(scope.format)
    ctx.body = serviceDocument(services.model, serviceRoot(ctx, services))
    return
  }
  if (target.kind === 'metadata') {
    const format = scope.media === 'json' ? 'json' : 'xml'
    const version = ctx.response.get('OData-Version') === '4.01' ? '4.01' : '4.0'
    // XML and JSON, 4.0 and 4.01 share the URL: a cache keeps one answer per Accept and OData-MaxVersion.
    ctx.vary('Accept')
    ctx.vary('OData-MaxVersion')
    const document = printedDocument(services, format, version)
    ctx.set('ETag', document.etag)
    if (matchesNoneOf(ctx.get('If-None-Match'), document.etag)) {
      ctx.status = 304
      return
    }
    ctx.type = format === 'json' ? 'application/json; charset=utf-8' : 'application/xml; charset=utf-8'
    ctx.body = document.text
    return
  }
  if (target.kind === 'method') throw new Error('odata-routes.ts hands methods to method-handler.ts')
  if (target.kind === 'property') return readProperty(ctx, scope, target)
  const preferred = target.kind === 'collection' && !target.count ? preferredPageSize(ctx.get('Prefer'), services.config.ApiOptions.MaxTop) : undefined
  const pageSize = preferred?.size
  const shape = readShape(target, ctx.querystring, scope.format) + (pageSize ? ` page ${pageSize}` : '')
  const prepared = services.readPlans.read(scope.state.access, shape, pathKeys(target), () => prepareRead(scope, target, ctx.querystring, pageSize))
  const { plan, statement } = prepared
  if (plan.kind === 'count') {
    const [row] = await scope.session.query<{ body: string | null }>(statement.sql, statement.params)
    if (row.body === null) throw parentNotFound(target)
    ctx.type = 'text/plain'
    ctx.body = row.body
    return
  }
  const context = serviceRoot(ctx, services) + prepared.contextPath
  if (plan.kind === 'collection') {
    const body = await runCollectionRead(scope, plan, statement, context, ctx)
    // A $top, or $apply, makes the answer one page: the preference did not apply.
    if (preferred && plan.serverPage) ctx.set('Preference-Applied', `${preferred.name}=${preferred.size}`)
    ctx.type = jsonContentType(scope.format)
    ctx.body = headless(ctx, body)
    return
  }
  const found = await runEntityRead(scope, plan, statement, context)
  if (!found && target.kind === 'entity' && target.parent && !target.key && (await parentExists(scope, target.parent))) {
    // A single-valued navigation that relates no entity (OData 4.01 Part 1 §11.2.7): 204.
    ctx.status = 204
    return
  }
  if (!found) throw target.parent ? parentOrNavigationNotFound(target) : RequestError.notFound(`${target.entity.setName}(${target.kind === 'entity' ? target.key : '…'}) does not exist.`)
  ctx.set('ETag', found.etag)
  if (matchesNoneOf(ctx.get('If-None-Match'), found.etag)) {
    ctx.status = 304
    return
  }
  ctx.type = jsonContentType(scope.format)
  ctx.body = found.body
}

/** Parse → bind → authorize → plan → compile of a collection, a count or one entity. */
function prepareRead(scope: RequestScope, target: ReadTarget, querystring: string, pageSize?: number): PreparedRead {
  const { MaxNodeCount, MaxResponseBytes: maxBytes } = scope.services.config.ApiOptions
  const options = parseReadOptions(querystring, MaxNodeCount)
  const bound = bindRead(scope, target, options)
  const read = target.ref ? referencesOnly(bound, options) : bound
  const json = jsonOutput(scope)
  if (read.kind === 'collection') {
    if (target.kind === 'collection' && target.count) {
      const plan = planCount(read)
      return { plan, statement: compileCount(plan), contextPath: '' }
    }
    const plan = planCollectionRead(read, { ...planLimits(scope), pageSize })
    const projection = read.apply ? applyList(read.apply, scope.services.naming.toPublic(KEY)) : selectList(options, defaultKey(scope), read.read)
    const contextPath = target.ref ? '$metadata#Collection($ref)' : projectedContextPath(target.entity, projection)
    return { plan, statement: compileCollectionRead(plan, maxBytes, json), contextPath }
  }
  const plan = planEntityRead(read, planLimits(scope))
  const contextPath = target.ref ? '$metadata#$ref' : projectedContextPath(target.entity, selectList(options, defaultKey(scope), read.read), true)
  return { plan, statement: compileEntityRead(plan, maxBytes, json), contextPath }
}

function planLimits(scope: RequestScope): ReadPlanLimits {
  const { MaxTop, MaxResultItems } = scope.services.config.ApiOptions
  return { maxTop: MaxTop, maxResultItems: MaxResultItems }
}

/** How the statement writes its JSON: the negotiated format, and the names full metadata needs. */
function jsonOutput(scope: RequestScope): JsonOutput {
  const { model, naming } = scope.services
  return {
    format: scope.format,
    qualified: (name) => `${NAMESPACE}.${name}`,
    publicName: naming.toPublic,
    propertyType: (property) => declaredPropertyType(model, naming, property.entity, property.name) ?? 'Edm.String',
  }
}

/** What a read without $select projects, for its context URL: the key's public name, or everything. */
function defaultKey(scope: RequestScope): string | undefined {
  return defaultSelect(scope) === 'Key' ? scope.services.naming.toPublic(KEY) : undefined
}

/** `…/$ref`: the entities as their ids alone; $select and $expand have nothing to shape. */
function referencesOnly(read: BoundRead, options: QueryOptionsSyntax): BoundRead {
  if (options.select || options.expand) throw QueryError.invalid('$select and $expand do not apply to references ($ref).')
  return { ...read, read: { ...read.read, select: [], virtuals: [], needs: [], expand: [], etag: false, ref: true } }
}

type PropertyTarget = Extract<Target, { kind: 'property' }>

/**
 * `Customers(<key>)/Name`: `{"@odata.context":…,"value":…}`; `/Name/$value`: the value as
 * text. A null value is 204 (OData 4.01 Protocol 11.2.6). The entity is read as a $select of
 * the property, with decimals as text so no digit is lost on the way through Node.
 */
async function readProperty(ctx: Exchange, scope: RequestScope, target: PropertyTarget): Promise<void> {
  const { services } = scope
  const options = parseReadOptions(ctx.querystring, services.config.ApiOptions.MaxNodeCount)
  if (options.select || options.expand || options.compute) throw QueryError.invalid('A property is read whole: $select, $expand and $compute do not apply to it.')
  const name = services.naming.toPublic(target.property.name)
  const entityTarget = { kind: 'entity' as const, entity: target.entity, key: target.key, parent: target.parent }
  const read = bindRead(scope, entityTarget, { ...options, select: [{ kind: 'selectPath', path: [name], position: 0 }] }) as BoundEntityByKey
  const json: JsonOutput = { ...jsonOutput(scope), format: { metadata: 'none', ieee754: true } }
  const plan = planEntityRead(read, planLimits(scope))
  const statement = compileEntityRead(plan, services.config.ApiOptions.MaxResponseBytes, json)
  logStatement(scope, statement.sql)
  const [row] = await scope.session.query<{ body: string | null; etag: string }>(statement.sql, statement.params)
  if (!row) throw target.parent ? parentOrNavigationNotFound(target) : RequestError.notFound(`${target.entity.setName}(${target.key}) does not exist.`)
  if (row.body === null) throw tooLarge(services.config.ApiOptions.MaxResponseBytes, 0)
  ctx.set('ETag', row.etag)
  // The property's ETag is its entity's: a current one means the client's value is current too.
  if (matchesNoneOf(ctx.get('If-None-Match'), row.etag)) {
    ctx.status = 304
    return
  }
  const value: unknown = JSON.parse(finishEntities(row.body, read.read, { cipher: scope.session.tenant.cipher, ieee754: true }, true))[name]
  if (value === null || value === undefined) {
    ctx.status = 204
    return
  }
  if (target.raw) {
    ctx.type = 'text/plain; charset=utf-8'
    ctx.body = headless(ctx, String(value))
    return
  }
  // A decimal arrives as its text: written bare it is the exact JSON number.
  const written = target.property.type === 'Decimal' && !scope.format.ieee754 && typeof value === 'string' ? value : JSON.stringify(value)
  const path = target.parent
    ? `${target.parent.navigation.entity.setName}(${target.parent.key})/${services.naming.toPublic(target.parent.navigation.name)}${target.key ? `(${target.key})` : ''}`
    : `${target.entity.setName}(${target.key})`
  const context = scope.format.metadata === 'none' ? '' : `"@odata.context":${JSON.stringify(`${serviceRoot(ctx, services)}$metadata#${path}/${name}`)},`
  // Full metadata: the targeted property's type, when its JSON does not tell it (OData JSON 4.01 §3.1.2).
  const annotation = scope.format.metadata === 'full' ? typeAnnotation(jsonOutput(scope).propertyType(target.property)) : undefined
  const type = annotation ? `"@odata.type":${JSON.stringify(annotation)},` : ''
  ctx.type = jsonContentType(scope.format)
  ctx.body = headless(ctx, `{${context}${type}"value":${written}}`)
}

async function parentExists(scope: RequestScope, parent: ParentLink): Promise<boolean> {
  const statement = compileParentExists(parent)
  const [row] = await scope.session.query<{ exists: boolean }>(statement.sql, statement.params)
  return row.exists
}

/** `Customers(<key>)/Orders` for a customer that does not exist. */
function parentNotFound(target: Target): ServiceError {
  const parent = 'parent' in target ? target.parent : undefined
  if (!parent) return RequestError.notFound('The resource does not exist.')
  return RequestError.notFound(`${parent.navigation.entity.setName}(${parent.key}) does not exist.`)
}

/** `Orders(<key>)/Customer` with no answer: the order does not exist, or has no customer (or `Orders(<key>)/Lines(<key>)`: no such line). */
function parentOrNavigationNotFound(target: Target): ServiceError {
  const parent = 'parent' in target ? target.parent : undefined
  if (!parent) return parentNotFound(target)
  const member = 'key' in target && target.key ? `(${target.key})` : ''
  return RequestError.notFound(`${parent.navigation.entity.setName}(${parent.key})/${parent.navigation.name}${member} does not exist.`)
}

/**
 * `If-None-Match` of a GET (RFC 9110 13.1.2): true when the entity's current ETag is among
 * the client's, or the client sent `*`, so the client's copy is current (304). Weak
 * comparison, as a GET allows.
 */
function matchesNoneOf(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false
  if (ifNoneMatch.trim() === '*') return true
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag))
}

/** A HEAD answers the headers of a GET: a streamed body is stopped (its statement with it) and not sent. */
export function headless(ctx: Exchange, body: string | Readable): string | Readable {
  if (ctx.method !== 'HEAD' || typeof body === 'string') return body
  body.destroy()
  return ''
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

/** What makes two reads the same statement but for their keys: the path's shape, the query options and the JSON format. */
function readShape(target: ReadTarget, querystring: string, format: JsonFormat): string {
  const parent = target.parent ? `${target.parent.navigation.entity.name}.${target.parent.navigation.name}` : ''
  const kind = target.kind === 'collection' && target.count ? 'count' : target.kind
  const written = format === DEFAULT_FORMAT ? '' : ` ${format.metadata}${format.ieee754 ? ' ieee754' : ''}`
  return `${kind}${target.ref ? ' $ref' : ''} ${target.entity.name} ${parent}${written}?${querystring}`
}

/** The keys of the resource path, in the order the plan takes them (read-plan.ts, pathKeys). */
function pathKeys(target: ReadTarget): string[] {
  if (target.parent) return target.kind === 'entity' && target.key ? [target.parent.key, target.key] : [target.parent.key]
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
 * Plans and runs a collection read (a method's result), written in the request's negotiated
 * format as a read is; its answer is a string, or a stream when it is longer than a batch and
 * `ctx` can take one. Adds @odata.nextLink when the server paged it.
 */
export async function readCollection(scope: RequestScope, read: BoundCollectionRead, context: string, ctx?: Exchange): Promise<string | Readable> {
  const plan = planCollectionRead(read, planLimits(scope))
  return runCollectionRead(scope, plan, compileCollectionRead(plan, scope.services.config.ApiOptions.MaxResponseBytes, jsonOutput(scope)), context, ctx)
}

/**
 * 404 unless `Customers(k)/Orders(m)` reaches an entity, read as a GET of that path is (its
 * permissions too): a method called on a member of a navigation runs on Orders(m) once the
 * path is known to hold it.
 */
export async function requireMember(scope: RequestScope, entity: EntityModel, key: string, parent: ParentLink): Promise<void> {
  const target = { kind: 'entity' as const, entity, key, parent }
  const read = bindRead(scope, target, parseReadOptions('', scope.services.config.ApiOptions.MaxNodeCount)) as BoundEntityByKey
  if (!(await readEntity(scope, read, ''))) throw parentOrNavigationNotFound(target)
}

/** One entity as answered: its JSON (context included) and its ETag. */
export interface EntityRead {
  readonly body: string
  readonly etag: string
}

/** Plans and runs a read of one entity (a write's or a method's reply), in the negotiated format as a read is. */
export async function readEntity(scope: RequestScope, read: BoundEntityByKey, context: string): Promise<EntityRead | undefined> {
  const plan = planEntityRead(read, planLimits(scope))
  return runEntityRead(scope, plan, compileEntityRead(plan, scope.services.config.ApiOptions.MaxResponseBytes, jsonOutput(scope)), context)
}

/** How Node finishes what the statement could not (finish-entities.ts), in the negotiated format. */
function finishing(scope: RequestScope): Finishing {
  return { cipher: scope.session.tenant.cipher, ieee754: scope.format.ieee754 }
}

/**
 * The same read, made by a write's statement of the row it writes (persistence/unit-of-work.ts
 * RowReadBack): planned here, compiled into that statement; `found()` is the answer once the
 * statement gave the row, finished as runEntityRead finishes its own (undefined before).
 */
export function readBackOf(scope: RequestScope, read: BoundEntityByKey, context: string): { readBack: RowReadBack; found(): EntityRead | undefined } {
  const plan = planEntityRead(read, planLimits(scope))
  const maxBytes = scope.services.config.ApiOptions.MaxResponseBytes
  let taken: EntityRow | undefined
  return {
    readBack: {
      entity: read.entity,
      key: read.key,
      sql: (relation, params) => compileEntityRead(plan, maxBytes, jsonOutput(scope), { relation, params }).sql,
      // No etag: the statement's read found no row (it cannot, the row being its own); the caller then reads it.
      take: (row) => {
        if (row.etag != null) taken = row as EntityRow
      },
    },
    found: () => taken && entityFromRow(scope, plan, taken, context),
  }
}

async function runCollectionRead(scope: RequestScope, plan: CollectionPlan, statement: CompiledRead, context: string, ctx?: Exchange): Promise<string | Readable> {
  logStatement(scope, statement.sql)
  const { session, services, state } = scope
  const read = plan.entity.read
  // A workflow keeps its answers whole (they are stored): its session has no cursor.
  const cursor = session.cursor
    ? await session.cursor(statement.sql, statement.params, { batchRows: BATCH_ROWS, rowsAtMost: plan.maxRows, maxBytes: services.config.ApiOptions.MaxResponseBytes })
    : wholeCursor(await session.query<Record<string, unknown>>(statement.sql, statement.params))
  const nextSkip = plan.serverPage?.nextSkip
  const shape = {
    context: scope.format.metadata === 'none' ? undefined : context,
    countAsText: scope.format.ieee754,
    parentMissing: () => parentNotFound(scope.target),
    maxBytes: services.config.ApiOptions.MaxResponseBytes,
    // Asked once per read, not per entity: most reads pass their rows through untouched.
    finish: needsFinishing(read) ? (body: string) => finishEntities(body, read, finishing(scope), true) : (body: string) => body,
    nextLink: () => (ctx && nextSkip !== undefined ? nextLink(ctx, services, nextSkip) : undefined),
  }
  return collectionAnswer(cursor, shape, state.log, Boolean(ctx && session.cursor))
}

type EntityRow = { body: string | null; etag: string }

async function runEntityRead(scope: RequestScope, plan: EntityPlan, statement: CompiledRead, context: string): Promise<EntityRead | undefined> {
  logStatement(scope, statement.sql)
  const [row] = await scope.session.query<EntityRow>(statement.sql, statement.params)
  return row && entityFromRow(scope, plan, row, context)
}

/** A row of compileEntityRead's statement as the answer: virtual properties computed, the context added. */
function entityFromRow(scope: RequestScope, plan: EntityPlan, row: EntityRow, context: string): EntityRead {
  if (row.body === null) throw tooLarge(scope.services.config.ApiOptions.MaxResponseBytes, 0)
  const body = finishEntities(row.body, plan.entity.read, finishing(scope), true)
  return { body: scope.format.metadata === 'none' ? body : entityAnswer(context, body), etag: row.etag }
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
function nextLink(ctx: Exchange, services: RequestScope['services'], skip: number): string {
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
