// Notices a client that goes away before its answer: ctx.state.signal is aborted when the
// connection closes while the response is unfinished, so the request stops waiting for a
// connection and its running statement is cancelled in PostgreSQL
// (persistence/request-connection.ts) instead of running on for nobody.

import type { Context, Next } from 'koa'
import { ServiceError } from '../errors.ts'
import type { ApiState } from './api-state.ts'

export async function clientDisconnect(ctx: Context & { state: ApiState }, next: Next): Promise<void> {
  const controller = new AbortController()
  const response = ctx.res
  const closed = () => {
    if (!response.writableFinished) controller.abort(new ServiceError('ServiceUnavailable', 'The client closed its connection before the answer; the request was abandoned.'))
  }
  // A response emits 'close' once, finished or not (after Koa has written the body, which may
  // stream after this middleware returns): the listener goes with it.
  response.once('close', closed)
  ctx.state.signal = controller.signal
  await next()
}
