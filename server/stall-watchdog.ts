// A process whose event loop never comes back serves nobody: plugin code in an endless loop
// (`while (order.Total > 0) {}` on data its author did not foresee) blocks every tenant's
// requests, the health checks and SIGTERM alike, and a timer cannot fire to end it. So a
// worker thread watches a heartbeat the event loop beats; when it has stopped for longer than
// ApiOptions:PluginTimeoutSeconds the worker finds where the main thread is (through the
// inspector: pause, read the stack, stop that JavaScript), and `serve` logs that place and
// exits 1 for the supervisor to start a clean process. Stopping the JavaScript cannot resume
// the requests it shared its callback with, hence the exit; PostgreSQL rolls back what the
// process's transactions had not committed.
//
//   watchForStalls(30_000, (stall) => { log(stall); exit(1) })

import inspector from 'node:inspector'
import { Worker } from 'node:worker_threads'

/** Where the main thread was when the watchdog stopped it: the innermost frames first. */
export interface Stall {
  readonly blockedMs: number
  /** `function (file:line:column)`, innermost first; empty when the stack could not be read. */
  readonly stack: readonly string[]
}

/** How often the event loop beats: a stall is noticed within this of its limit. */
const BEAT_MS = 250

/**
 * Starts the watchdog; `onStall` runs on the main thread once the loop has been unblocked,
 * and must end the process. When the loop cannot be unblocked (the thread is stuck outside
 * JavaScript), the worker writes the stall to stderr and kills the process itself. It watches
 * for the life of the process; not while a debugger may be attached (`--inspect`).
 */
export function watchForStalls(limitMs: number, onStall: (stall: Stall) => void): void {
  // A developer's debugger (--inspect) pauses the thread at breakpoints for as long as it likes.
  if (inspector.url()) return
  const heartbeat = new Int32Array(new SharedArrayBuffer(4))
  const beat = setInterval(() => Atomics.add(heartbeat, 0, 1), BEAT_MS)
  beat.unref()
  const worker = new Worker(new URL('./stall-watchdog-worker.ts', import.meta.url), { workerData: { heartbeat, limitMs, beatMs: BEAT_MS } })
  worker.unref()
  worker.on('message', (stall: Stall) => onStall(stall))
}
