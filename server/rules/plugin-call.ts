// Plugin code (rules and methods) runs on the request's connection, often in its transaction:
// a promise of a plugin that never settles must not hold them, nor the server's shutdown. So
// the wait for it ends after ApiOptions:PluginTimeoutSeconds, or when the client goes away,
// with an error naming the plugin's function; the session then rolls back and gives the
// connection back. The plugin's promise is abandoned, not stopped (JavaScript cannot stop it);
// whatever it does later touches a unit of work nobody flushes. What plugin code throws is its
// bug, answered as PluginFailed naming the rule or method (callPlugin, awaitPlugin).

import { PluginError, ServiceError, shortened } from '../errors.ts'
import { isLostConnection } from '../persistence/database-errors.ts'
import type { ScalarDecl } from '../model/declarations.ts'
import { atScale, parseClientValue } from './values.ts'

/** How long one call of plugin code may keep a request waiting. */
export interface PluginLimits {
  /** 0: no limit. */
  readonly timeoutMs: number
  /** Aborted when the client has gone: the wait ends with the signal's reason. */
  readonly signal?: AbortSignal
}

export const NO_PLUGIN_LIMITS: PluginLimits = { timeoutMs: 0 }

/**
 * Calls plugin code `what` (`computed Order.Total`) that answers at once. What it throws is the
 * plugin's bug, named (PluginFailed), not an anonymous 500; errors of ours it passes on (a
 * ServiceError, a database error met by its find) stay what they are.
 */
export function callPlugin<T>(what: string, call: () => T): T {
  try {
    return call()
  } catch (error) {
    throw pluginThrew(what, error)
  }
}

/**
 * The value of plugin code `what` (`method Order.Close`, `validation Order.Status`) once it
 * settles, within `limits`. A plain value passes at once; what it throws or rejects with is
 * named as callPlugin names it.
 */
export async function awaitPlugin<T>(what: string, call: () => T | PromiseLike<T>, limits: PluginLimits): Promise<T> {
  const answer = callPlugin(what, call)
  if (!isThenable(answer)) return answer
  const result = Promise.resolve(answer).catch((error: unknown) => {
    throw pluginThrew(what, error)
  })
  const { timeoutMs, signal } = limits
  if (timeoutMs <= 0 && !signal) return await result
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    if (timeoutMs > 0) timer = setTimeout(() => reject(PluginError.timedOut(what, timeoutMs)), timeoutMs)
    if (!signal) return
    onAbort = () => reject(signal.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([result, deadline])
  } finally {
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
  }
}

function pluginThrew(what: string, error: unknown): unknown {
  if (error instanceof ServiceError || isDatabaseError(error) || isLostConnection(error)) return error
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  return PluginError.fault(what, `failed: ${shortened(message, 200)}`, error)
}

/** An error PostgreSQL sent (pg's DatabaseError): it carries an SQLSTATE and a severity. */
function isDatabaseError(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as { code?: unknown; severity?: unknown }
  return typeof code === 'string' && typeof severity === 'string'
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/**
 * A value plugin code gives a property (`subject`) or a method's result, as the unit stores it.
 * One that does not fit the declared type is the plugin's fault, named as such: left to
 * PostgreSQL it came back as a client's 400, or passed unnoticed into an answer. A decimal is
 * rounded to its scale first, as PostgreSQL rounds it (arithmetic gives 0.30000000000000004).
 */
export function pluginValue(what: string, subject: string, decl: ScalarDecl, value: unknown): unknown {
  if (value === null || value === undefined) return null
  let given = value
  if (value instanceof Date && !Number.isNaN(value.getTime())) given = decl.type === 'Date' ? value.toISOString().slice(0, 10) : value.toISOString()
  if (decl.type === 'Decimal' && typeof value === 'number' && Number.isFinite(value)) given = atScale(decl, value)
  const checked = parseClientValue({ type: decl.type, decl }, given)
  if ('problem' in checked) throw PluginError.fault(what, `gave a wrong value for ${subject}, which ${checked.problem}`)
  return checked.value
}
