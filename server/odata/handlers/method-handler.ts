// Plugin methods as OData functions (read: GET) and actions (modify: POST), static or bound
// to one entity (specification 4.3). Parameters come from the path, the query string or
// the JSON body, typed by the plugin; a read method's unit of work must change nothing, a
// modify method's changes pass the rules and are written together. The parameters and the
// reply's query options are bound before the method runs, so a call refused for either
// changes nothing.

import { QueryError, RequestError, ServiceError } from '../../errors.ts'
import type { MethodDecl, PropertyDecl } from '../../model/declarations.ts'
import type { EntityModel, ScalarProperty } from '../../model/model.ts'
import { KEY } from '../../model/model.ts'
import { ViewScope, entryOf } from '../../rules/entity-view.ts'
import { findViews } from '../../rules/find.ts'
import { parseClientValue } from '../../rules/values.ts'
import { parseParameterValue } from '../parser/query-options-parser.ts'
import type { PathArgumentSyntax } from '../parser/syntax.ts'
import { bindCollectionRead } from '../semantic/bind-read.ts'
import type { Target } from '../semantic/bind-path.ts'
import { authorize, type BoundRead } from '../semantic/authorize.ts'
import { serviceRoot, contextUrl } from '../serializer/urls.ts'
import { bindContextFor, parseReadOptions, readCollection, readEntity } from './read-handler.ts'
import { bindEntityRead } from '../semantic/bind-read.ts'
import type { ApiContext, RequestScope } from './odata-routes.ts'
import type { UnitOfWork } from '../../persistence/unit-of-work.ts'

type MethodTarget = Extract<Target, { kind: 'method' }>

export async function handleMethod(ctx: ApiContext, scope: RequestScope, target: MethodTarget): Promise<void> {
  const { entity, method, name } = target
  const expected = method.kind === 'read' ? 'GET' : 'POST'
  if (ctx.method !== expected) throw RequestError.methodNotAllowed(ctx.method, ctx.path, [expected])
  const access = scope.state.access
  const options = parseReadOptions(ctx.querystring, scope.services.config.ApiOptions.MaxNodeCount)
  const input = readParameters(ctx, scope, method, target.inline, options.custom)
  const { respond, resultRead } = bindReply(ctx, scope, target, options)
  // An entity result's reading is authorized with the call, before the method runs.
  authorize(access, { kind: 'execute', entity, method: name, result: resultRead })
  let wroteAccess = false
  const run = async (unit: UnitOfWork) => {
    const views = new ViewScope(unit)
    const now = unit.now
    const context = {
      find: (type: string, where?: Record<string, unknown>) => findViews(unit, views, type, where),
      now,
      today: now.toISOString().slice(0, 10),
      user: access ? { guid: access.userGuid, username: access.username } : undefined,
    }
    let result: unknown
    if (target.key) {
      const [record] = await unit.load([{ entity, key: target.key }])
      if (record.state !== 'loaded') throw RequestError.notFound(`${entity.setName}(${target.key}) does not exist.`)
      result = await method.run(views.view(record), { ...context, params: input, ...input })
    } else {
      result = await method.run(input, context)
    }
    // A read method's changes are refused (403) rather than dropped, so a write attempt
    // fails visibly; a modify method's are flushed by the session.
    // Users, roles or their links in the unit may be changed by its flush (checked below).
    wroteAccess = unit.entries().some((entry) => entry.entity.system)
    return keysOf(result)
  }
  const result = method.kind === 'read' ? await scope.session.read(run) : await scope.session.write(run)
  // A modify method may change users and roles like any write (write-handlers.ts afterWrite).
  if (method.kind === 'modify' && wroteAccess && !scope.state.session) await scope.services.access.changed(scope.session.tenant)
  try {
    await respond(result)
  } catch (error) {
    // A modify method's changes are saved by now (outside a workflow): its answer says so,
    // as a write's does when its reply cannot be read (write-handlers.ts, answered).
    if (method.kind !== 'modify' || scope.state.session) throw error
    scope.state.log.warn({ err: error }, 'method saved its changes; its reply could not be read')
    ctx.status = 204
    ctx.body = null
  }
}

/** Entity results are carried out of the unit of work as keys, then read through the query pipeline. */
function keysOf(result: unknown): unknown {
  const keyOf = (item: object) => ({ [KEY]: entryOf(item)?.key ?? (item as Record<string, unknown>)[KEY] })
  if (Array.isArray(result)) return result.map((item) => (item && typeof item === 'object' ? keyOf(item) : item))
  if (result && typeof result === 'object') return keyOf(result)
  return result
}

/** How a method answers: its result read as the reply's query options ask. */
interface Reply {
  readonly respond: (result: unknown) => Promise<void>
  /** An entity result's read, without its keys (the method gives them), for authorize.ts. */
  readonly resultRead?: BoundRead
}

/**
 * Binds the reply's query options to what the method returns, before it runs; the answer it
 * returns is then given from the method's result. Entity results are read through the query
 * pipeline; a method that returns no entities takes none of the system query options.
 */
function bindReply(ctx: ApiContext, scope: RequestScope, target: MethodTarget, options: ReturnType<typeof parseReadOptions>): Reply {
  const returns = target.method.returns
  const root = serviceRoot(ctx, scope.services)
  if (returns?.kind === 'collection') {
    const entity = scope.services.model.entities.get(returns.target)!
    const read = bindCollectionRead(bindContextFor(scope, options), entity, options, scope.services.config.ApiOptions.DefaultSelect as 'Key')
    const respond = async (result: unknown) => {
      const keys = (Array.isArray(result) ? result : []).map((r) => String((r as Record<string, unknown>)[KEY]))
      const body = await readCollection(scope, { ...read, keys }, contextUrl(root, entity, options.select, false), ctx)
      ctx.type = 'application/json; odata.metadata=minimal'
      ctx.body = body
    }
    return { respond, resultRead: read }
  }
  if (returns?.kind === 'reference') {
    const entity = scope.services.model.entities.get(returns.target)!
    if (options.filter || options.orderby || options.top !== undefined || options.skip !== undefined || options.apply || options.count !== undefined) {
      throw QueryError.invalid(`$filter, $orderby, $top, $skip, $count and $apply apply to collections; ${target.name} returns one ${entity.name}.`)
    }
    const context = bindContextFor(scope, options)
    const read = bindEntityRead(context, context.nextRange(entity), options.select, options.expand, 'Key', 1)
    const respond = async (result: unknown) => {
      const key = result ? String((result as Record<string, unknown>)[KEY]) : ''
      const found = key ? await readEntity(scope, { kind: 'entity', entity, key, read }, contextUrl(root, entity, options.select, false, true)) : undefined
      if (!found) {
        ctx.status = 204
        ctx.body = null
        return
      }
      ctx.type = 'application/json; odata.metadata=minimal'
      ctx.body = found.body
    }
    return { respond, resultRead: { kind: 'entity', entity, key: '', read } }
  }
  const given = systemOptionsIn(options)
  if (given.length > 0) throw QueryError.invalid(`${given.join(', ')}: ${target.name} returns ${returns ? 'no entities' : 'nothing'}, so no query option applies to its answer.`, given[0])
  if (!returns) {
    return {
      respond: async () => {
        ctx.status = 204
      },
    }
  }
  return {
    respond: async (result) => {
      ctx.type = 'application/json; odata.metadata=minimal'
      ctx.body = JSON.stringify({ '@odata.context': `${root}$metadata#${edmName(returns.type)}`, value: result ?? null })
    },
  }
}

/** The system query options a request gives ($format aside, which only chooses the answer's format). */
function systemOptionsIn(options: ReturnType<typeof parseReadOptions>): string[] {
  const given: Array<[string, unknown]> = [
    ['$select', options.select], ['$expand', options.expand], ['$filter', options.filter], ['$orderby', options.orderby], ['$apply', options.apply],
    ['$compute', options.compute], ['$top', options.top], ['$skip', options.skip], ['$count', options.count], ['$skiptoken', options.skiptoken],
  ]
  return given.filter(([, value]) => value !== undefined).map(([name]) => name)
}

function readParameters(
  ctx: ApiContext,
  scope: RequestScope,
  method: MethodDecl,
  inline: readonly PathArgumentSyntax[] | undefined,
  custom: ReadonlyMap<string, string>,
): Record<string, unknown> {
  const naming = scope.services.naming
  const body = ctx.method === 'POST' ? ((ctx.request as { body?: unknown }).body ?? {}) : {}
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw RequestError.invalid('The parameters of an action are a JSON object.')
  const fromBody = body as Record<string, unknown>
  const input: Record<string, unknown> = {}
  const known = new Set<string>()
  for (const [name, decl] of Object.entries(method.params)) {
    const publicName = naming.toPublic(name)
    known.add(publicName)
    const inlineArg = inline?.find((a) => a.name === publicName)
    let value: unknown
    if (publicName in fromBody) value = checkValue(name, decl, fromBody[publicName])
    else if (inlineArg) value = checkValue(name, decl, inlineArg.value.kind === 'literal' ? inlineArg.value.value : undefined)
    else if (custom.has(publicName)) value = fromQueryString(name, decl, custom.get(publicName)!)
    if (value === undefined || value === null) {
      if ('default' in decl && decl.default !== undefined) value = decl.default
      else if (isRequired(decl)) throw new ServiceError('MissingParameter', `The parameter '${publicName}' is required.`, { target: publicName })
      else value = null
    }
    input[name] = value
  }
  for (const name of Object.keys(fromBody)) {
    if (!known.has(name) && !name.startsWith('@')) throw new ServiceError('InvalidParameter', `Unknown parameter '${name}'; parameters: ${[...known].join(', ') || '(none)'}.`, { target: name })
  }
  return input
}

function isRequired(decl: PropertyDecl): boolean {
  return decl.kind !== 'collection' && decl.required
}

function fromQueryString(name: string, decl: PropertyDecl, text: string): unknown {
  let value: unknown = text
  try {
    const parsed = parseParameterValue(text, name)
    if (parsed.kind === 'literal') value = parsed.value
  } catch {
    // An unquoted string ('category=Tools') is accepted as the text it is.
  }
  if (decl.kind === 'scalar' && ['Text', 'ProperNoun', 'MultilineText', 'Email', 'Enum'].includes(decl.type) && typeof value !== 'string') value = text
  return checkValue(name, decl, typeof value === 'bigint' ? Number(value) : value)
}

function checkValue(name: string, decl: PropertyDecl, value: unknown): unknown {
  if (value === undefined || value === null) return value
  if (decl.kind !== 'scalar') {
    if (typeof value !== 'string') throw new ServiceError('InvalidParameter', `The parameter '${name}' expects a Guid.`, { target: name })
    return value
  }
  const parsed = parseClientValue({ kind: 'scalar', name, type: decl.type, decl, column: name } as unknown as ScalarProperty, decl.type === 'Decimal' && typeof value === 'string' ? value : value)
  if ('problem' in parsed) throw new ServiceError('InvalidParameter', `The parameter '${name}' ${parsed.problem}.`, { target: name })
  if (decl.kind === 'scalar' && decl.values && !decl.values.includes(parsed.value as string)) {
    throw new ServiceError('InvalidParameter', `The parameter '${name}' must be one of ${decl.values.join(', ')}.`, { target: name })
  }
  return parsed.value
}

function edmName(type: string): string {
  const map: Record<string, string> = {
    Integer: 'Edm.Int32', Decimal: 'Edm.Decimal', Double: 'Edm.Double', Boolean: 'Edm.Boolean', Date: 'Edm.Date',
    DateTimeOffset: 'Edm.DateTimeOffset', TimeOfDay: 'Edm.TimeOfDay', Guid: 'Edm.Guid',
  }
  return map[type] ?? 'Edm.String'
}

export type { EntityModel }
