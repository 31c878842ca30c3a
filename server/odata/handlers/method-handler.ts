// Plugin methods as OData functions (read: GET) and actions (modify: POST), static or bound
// to one entity (specification 4.3). Parameters come from the path, the query string or
// the JSON body, typed by the plugin; a read method's unit of work must change nothing, a
// modify method's changes pass the rules and are written together.

import { RequestError, ServiceError } from '../../errors.ts'
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
  // An entity result is bound, and its reading authorized with the call, before the method runs.
  const resultRead = bindResult(scope, target, options)
  authorize(access, { kind: 'execute', entity, method: name, result: resultRead })
  const input = readParameters(ctx, scope, method, target.inline, options.custom)
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
    return keysOf(result)
  }
  const result = method.kind === 'read' ? await scope.session.read(run) : await scope.session.write(run)
  if (method.kind === 'modify') scope.services.access.invalidateTenant(scope.session.tenant.tenant)
  await respond(ctx, scope, target, options, resultRead, result)
}

/** How the method's entity result will be read, without its keys (the method gives them). */
function bindResult(scope: RequestScope, target: MethodTarget, options: ReturnType<typeof parseReadOptions>): BoundRead | undefined {
  const returns = target.method.returns
  if (returns?.kind !== 'collection' && returns?.kind !== 'reference') return undefined
  const entity = scope.services.model.entities.get(returns.target)!
  const context = bindContextFor(scope, options)
  if (returns.kind === 'collection') return bindCollectionRead(context, entity, options, scope.services.config.ApiOptions.DefaultSelect as 'Key')
  return { kind: 'entity', entity, key: '', read: bindEntityRead(context, context.nextRange(entity), options.select, options.expand, 'Key', 1) }
}

/** Entity results are carried out of the unit of work as keys, then read through the query pipeline. */
function keysOf(result: unknown): unknown {
  const keyOf = (item: object) => ({ [KEY]: entryOf(item)?.key ?? (item as Record<string, unknown>)[KEY] })
  if (Array.isArray(result)) return result.map((item) => (item && typeof item === 'object' ? keyOf(item) : item))
  if (result && typeof result === 'object') return keyOf(result)
  return result
}

async function respond(
  ctx: ApiContext,
  scope: RequestScope,
  target: MethodTarget,
  options: ReturnType<typeof parseReadOptions>,
  resultRead: BoundRead | undefined,
  result: unknown,
): Promise<void> {
  const returns = target.method.returns
  if (!returns) {
    ctx.status = 204
    return
  }
  const root = serviceRoot(ctx, scope.services)
  ctx.type = 'application/json; odata.metadata=minimal'
  if (returns.kind !== 'scalar') {
    if (resultRead?.kind === 'collection') {
      const keys = (Array.isArray(result) ? result : []).map((r) => String((r as Record<string, unknown>)[KEY]))
      ctx.body = await readCollection(scope, { ...resultRead, keys }, contextUrl(root, resultRead.entity, options.select, false), ctx)
      return
    }
    const key = result ? String((result as Record<string, unknown>)[KEY]) : ''
    const found = key && resultRead ? await readEntity(scope, { ...resultRead, key }, contextUrl(root, resultRead.entity, options.select, false, true)) : undefined
    if (!found) {
      ctx.status = 204
      ctx.body = null
      return
    }
    ctx.body = found.body
    return
  }
  ctx.body = JSON.stringify({ '@odata.context': `${root}$metadata#${edmName(returns.type)}`, value: result ?? null })
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
