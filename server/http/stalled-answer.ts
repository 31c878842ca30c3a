// Cuts off an answer its client stopped taking. Node writes whatever the answer is into the
// socket's buffer, and a string answer (a page of up to 128 entities with their expansions,
// up to ApiOptions:MaxResponseBytes) waits there whole for as long as its client keeps the
// connection open without reading: sixty such clients held half a gigabyte. A streamed answer
// holds its statement, a connection of the tenant and a heavy-read slot meanwhile as well.
//
// Once the answer is handed to the response, its socket is watched every `QueryTimeoutSeconds`
// (the time a statement may hold a connection): when bytes wait in it and none went out since
// the last look, the connection is closed, which ends the answer (a streamed one closes its
// statement, client-disconnect.ts). A client that reads, however slowly, is never cut.

import type { Context, Next } from 'koa'
import type { ApiState } from './api-state.ts'

export function stalledAnswer(stallMs: () => number) {
  return async function cutStalledAnswer(ctx: Context & { state: ApiState }, next: Next): Promise<void> {
    await next()
    const ms = stallMs()
    // A client gone before its answer was ready: nothing is left to watch, and its 'close' has
    // passed, so a watch started now would never be stopped (it held the request's state and
    // answer for good: a leak of every abandoned request, 150 MB in a five-minute soak).
    if (ms <= 0 || ctx.res.closed) return
    const socket = ctx.req.socket
    // bytesWritten counts what waits in the socket's buffer too: what left is the difference.
    const left = () => socket.bytesWritten - socket.writableLength
    let before = left()
    const watch = setInterval(() => {
      const now = left()
      if (now === before && socket.writableLength > 0) {
        ctx.state.log.warn({ limit: 'ApiOptions:QueryTimeoutSeconds', waiting: socket.writableLength }, 'answer cut off: the client took nothing of it for ApiOptions:QueryTimeoutSeconds')
        socket.destroy()
      }
      before = now
    }, ms)
    watch.unref()
    ctx.res.once('close', () => clearInterval(watch))
  }
}
