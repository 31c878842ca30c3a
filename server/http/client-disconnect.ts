// Notices a request whose connection closes before its answer: ctx.state.signal is aborted, so
// the request stops waiting for a connection and its running statement is cancelled in
// PostgreSQL (persistence/request-connection.ts) instead of running on for nobody. Either its
// client went away, or the shutdown cut it (start.ts, after Server:ShutdownTimeoutSeconds): the
// signal's reason says which, for the log (error-boundary.ts).

import type Koa from 'koa'
import type { Context, Next } from 'koa'
import { ServiceError } from '../errors.ts'
import type { ApiState } from './api-state.ts'

/** The abort reason of a request whose connection closed before its answer. */
export class Abandoned extends ServiceError {
  /** Who closed the connection: the client, or the server's shutdown. */
  readonly by: 'client' | 'shutdown'

  constructor(by: 'client' | 'shutdown') {
    super(
      'ServiceUnavailable',
      by === 'client'
        ? 'The client closed its connection before the answer; the request was abandoned.'
        : 'The server shut down before the answer (Server:ShutdownTimeoutSeconds); the request was cut.',
    )
    this.by = by
  }
}

const CUT_BY_SHUTDOWN = Symbol('connections cut by the shutdown')

/** Called by the shutdown just before it cuts the connections still open: their requests were cut, not left. */
export function markShutdownCut(app: Koa<ApiState>): void {
  ;(app.context as unknown as Record<symbol, boolean>)[CUT_BY_SHUTDOWN] = true
}

export async function clientDisconnect(ctx: Context & { state: ApiState }, next: Next): Promise<void> {
  const controller = new AbortController()
  const response = ctx.res
  const closed = () => {
    if (response.writableFinished) return
    // app.context is every ctx's prototype: the mark reaches requests already running.
    controller.abort(new Abandoned((ctx as unknown as Record<symbol, boolean>)[CUT_BY_SHUTDOWN] ? 'shutdown' : 'client'))
  }
  // A response emits 'close' once, finished or not (after Koa has written the body, which may
  // stream after this middleware returns): the listener goes with it.
  response.once('close', closed)
  ctx.state.signal = controller.signal
  await next()
}
