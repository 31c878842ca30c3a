// Runs a plugin method on a unit of work: on the view of the entity it is bound to, or on its
// own for a static one, with its context (method-context.ts: find, now, today, the caller,
// refuse, create, remove). What it changes, creates and deletes is the unit's to flush;
// entities it returns leave as their keys, to be read through the query pipeline, and a
// primitive as its declared type's value (a Date as its literal).

import { PluginError, RequestError } from '../errors.ts'
import type { PropertyDecl } from '../model/declarations.ts'
import type { EntityModel } from '../model/model.ts'
import { KEY } from '../model/model.ts'
import type { UnitOfWork } from '../persistence/unit-of-work.ts'
import { ViewScope, entryOf } from './entity-view.ts'
import { methodContext, type RemoveWithCascades } from './method-context.ts'
import { awaitPlugin, pluginValue } from './plugin-call.ts'
import { jsonExcerpt } from './json-excerpt.ts'

export interface MethodCall {
  readonly entity: EntityModel
  readonly method: string
  readonly key?: string
  readonly params: Readonly<Record<string, unknown>>
  readonly user?: { readonly guid: string; readonly username: string }
}

export async function runMethod(unit: UnitOfWork, call: MethodCall, removeWithCascades: RemoveWithCascades): Promise<unknown> {
  const { entity, key, params } = call
  const method = entity.methods.get(call.method)
  if (!method) throw RequestError.notFound(`${entity.setName} has no method '${call.method}'.`)
  const what = `method ${entity.name}.${call.method}`
  const views = new ViewScope(unit, { what, params })
  const { context, settle } = methodContext({ unit, views, what, method, user: call.user }, removeWithCascades)
  const limits = unit.pluginLimits
  let result: unknown
  if (!key) {
    result = await awaitPlugin(what, () => method.run({ ...params }, context), limits)
  } else {
    const [record] = await unit.load([{ entity, key }])
    if (record.state !== 'loaded' || record.removed) throw RequestError.notFound(`${entity.setName}(${key}) does not exist.`)
    result = await awaitPlugin(what, () => method.run(views.view(record), { ...context, params: { ...params }, ...params }), limits)
  }
  await settle()
  return resultOf(what, method.returns, result)
}

/**
 * The method's result as its declaration says: a scalar of its type, or entities of its
 * target, carried out of the unit of work as keys, then read through the query pipeline.
 * Anything else is the plugin's fault, not an answer to pass on.
 */
function resultOf(what: string, returns: PropertyDecl | undefined, result: unknown): unknown {
  if (!returns) return undefined
  if (returns.kind === 'scalar') return pluginValue(what, 'its result', returns, result)
  const keyOf = (item: unknown) => {
    const entry = item && typeof item === 'object' ? entryOf(item) : undefined
    if (entry?.entity.name === returns.target) return { [KEY]: entry.key }
    // An object that only names a key ({ Guid }) is read as one of the target, as before.
    const named = !entry && item && typeof item === 'object' ? (item as Record<string, unknown>)[KEY] : undefined
    if (typeof named === 'string') return { [KEY]: named }
    const given = entry ? `an entity of ${entry.entity.name}` : jsonExcerpt(item)
    throw PluginError.fault(what, `returned ${given}, but declares returns: ${declared(returns)}`)
  }
  if (returns.kind === 'reference') return result === null || result === undefined ? null : keyOf(result)
  if (!Array.isArray(result)) throw PluginError.fault(what, `returned ${jsonExcerpt(result)}, but declares returns: ${declared(returns)}`)
  return result.map(keyOf)
}

function declared(returns: Exclude<PropertyDecl, { kind: 'scalar' }>): string {
  return returns.kind === 'reference' ? `p.reference('${returns.target}')` : `p.many('${returns.target}')`
}
