// The watch over an answer's socket (server/http/stalled-answer.ts) lives exactly as long as
// the connection: started once the answer is handed over, stopped when the connection closes,
// never started for a client that left before its answer (its 'close' has passed).

import { once } from 'node:events'
import { request, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import { afterEach, expect, it, vi } from 'vitest'
import { stalledAnswer } from '../../server/http/stalled-answer.ts'

let server: Server | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  server?.close()
  server = undefined
})

/**
 * A server whose answer waits for `ready`, and tells when the watch's middleware has finished
 * with the request; the intervals it starts and stops are counted.
 */
async function watchedServer(ready: (res: ServerResponse) => Promise<void>) {
  const started = vi.spyOn(globalThis, 'setInterval')
  const stopped = vi.spyOn(globalThis, 'clearInterval')
  let done!: () => void
  const finished = new Promise<void>((resolve) => (done = resolve))
  const app = new Koa()
  app.use(async (_ctx, next) => {
    await next()
    done()
  })
  app.use(stalledAnswer(() => 60_000))
  app.use(async (ctx) => {
    await ready(ctx.res)
    ctx.body = 'the answer'
  })
  server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return { port, finished, started: () => started.mock.calls.length, stopped: () => stopped.mock.calls.length }
}

it('watches an answer while its connection is open and stops when it closes', async () => {
  const watched = await watchedServer(async () => {})
  const answer = await new Promise<string>((resolve, reject) => {
    request({ port: watched.port, host: '127.0.0.1', agent: false }, (res) => {
      let text = ''
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve(text))
    }).on('error', reject).end()
  })
  expect(answer).toBe('the answer')
  await watched.finished
  expect(watched.started()).toBe(1)
  await vi.waitFor(() => expect(watched.stopped()).toBe(1))
})

it('starts no watch for a client that left before its answer was ready', async () => {
  let arrived!: () => void
  const inHandler = new Promise<void>((resolve) => (arrived = resolve))
  const watched = await watchedServer(async (res) => {
    arrived()
    await once(res, 'close')
  })
  const client = request({ port: watched.port, host: '127.0.0.1', agent: false })
  client.on('error', () => {})
  client.end()
  await inHandler
  client.destroy()
  await watched.finished
  expect(watched.started()).toBe(0)
})
