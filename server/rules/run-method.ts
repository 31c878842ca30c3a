// Runs a plugin method on a unit of work: on the view of the entity it is bound to, or on its
// own for a static one, with the context rules get (find, now, today) and the caller. What it
// changes is the unit's to flush; entities it returns leave as their keys, to be read through
// the query pipeline, and a primitive as it is (a Date too: the serializer writes its literal).

import { RequestError } from '../errors.ts'
import type { EntityModel } from '../model/model.ts'
import { KEY } from '../model/model.ts'
import type { UnitOfWork } from '../persistence/unit-of-work.ts'
import { ViewScope, entryOf } from './entity-view.ts'
import { findViews } from './find.ts'
import { awaitPlugin } from './plugin-call.ts'

export interface MethodCall {
  readonly entity: EntityModel
  readonly method: string
  readonly key?: string
  readonly params: Readonly<Record<string, unknown>>
  readonly user?: { readonly guid: string; readonly username: string }
}

export async function runMethod(unit: UnitOfWork, call: MethodCall): Promise<unknown> {
  const { entity, key, params } = call
  const method = entity.methods.get(call.method)
  if (!method) throw RequestError.notFound(`${entity.setName} has no method '${call.method}'.`)
  const views = new ViewScope(unit)
  const now = unit.now
  const context = {
    find: (type: string, where?: Record<string, unknown>) => findViews(unit, views, type, where),
    now,
    today: now.toISOString().slice(0, 10),
    user: call.user,
  }
  const what = `method ${entity.name}.${call.method}`
  const limits = unit.pluginLimits
  const returnsEntities = method.returns !== undefined && method.returns.kind !== 'scalar'
  const result = (value: unknown) => (returnsEntities ? keysOf(value) : value)
  if (!key) return result(await awaitPlugin(what, method.run({ ...params }, context), limits))
  const [record] = await unit.load([{ entity, key }])
  if (record.state !== 'loaded' || record.removed) throw RequestError.notFound(`${entity.setName}(${key}) does not exist.`)
  return result(await awaitPlugin(what, method.run(views.view(record), { ...context, params: { ...params }, ...params }), limits))
}

/** Entity results are carried out of the unit of work as keys, then read through the query pipeline. */
function keysOf(result: unknown): unknown {
  const keyOf = (item: object) => ({ [KEY]: entryOf(item)?.key ?? (item as Record<string, unknown>)[KEY] })
  if (Array.isArray(result)) return result.map((item) => (item && typeof item === 'object' ? keyOf(item) : item))
  if (result && typeof result === 'object') return keyOf(result)
  return result
}
