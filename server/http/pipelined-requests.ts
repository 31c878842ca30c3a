// Runs the requests a client pipelines on one connection one after the other. Node reads them
// a buffer at a time (hundreds of short requests in one read) and hands each to the app at
// once; HTTP/1.1 sends their answers in order, so every answer but the first waited whole in
// memory for those before it. A client that pipelined 500 reads and read nothing piled up
// answers by the hundred megabytes a second, each up to MaxResponseBytes. In turn, a
// connection holds at most one answer, which http/stalled-answer.ts cuts off if its client
// takes nothing of it; the requests still waiting then never run.

import type { Context, Next } from 'koa'
import type { Socket } from 'node:net'

/** The answer of each connection's latest request: closed (sent, or cut off), the next may run. */
const latest = new WeakMap<Socket, Promise<void>>()

export async function inTurn(ctx: Context, next: Next): Promise<void> {
  const socket = ctx.req.socket
  const before = latest.get(socket)
  const closed = new Promise<void>((resolve) => ctx.res.once('close', () => resolve()))
  latest.set(socket, closed)
  if (before) {
    await before
    // Its connection closed meanwhile: nobody is left to answer.
    if (socket.destroyed) return
  }
  await next()
}
