// Plugin code (rules and methods) runs on the request's connection, often in its transaction:
// a promise of a plugin that never settles must not hold them, nor the server's shutdown. So
// the wait for it ends after ApiOptions:PluginTimeoutSeconds, or when the client goes away,
// with an error naming the plugin's function; the session then rolls back and gives the
// connection back. The plugin's promise is abandoned, not stopped (JavaScript cannot stop it);
// whatever it does later touches a unit of work nobody flushes.

import { PluginError } from '../errors.ts'

/** How long one call of plugin code may keep a request waiting. */
export interface PluginLimits {
  /** 0: no limit. */
  readonly timeoutMs: number
  /** Aborted when the client has gone: the wait ends with the signal's reason. */
  readonly signal?: AbortSignal
}

export const NO_PLUGIN_LIMITS: PluginLimits = { timeoutMs: 0 }

/**
 * The value of plugin code `what` (`method Order.Close`, `validation Order.Status`) once it
 * settles, within `limits`. A plain value passes at once.
 */
export async function awaitPlugin<T>(what: string, result: T | PromiseLike<T>, limits: PluginLimits): Promise<T> {
  if (!isThenable(result)) return result
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

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}
