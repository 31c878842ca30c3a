// The HTTP edge against a real server: what a hostile or broken client sends before the OData
// layer sees a request (corrupt compressed bodies, NUL and bytes PostgreSQL refuses, heads too
// long or too slow, CONNECT, garbage, too many connections) is answered with a 4xx/5xx status
// and an OData error body, never a 500 or a reset, and the server goes on serving.

import { createHook } from 'node:async_hooks'
import { connect, type Socket } from 'node:net'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../server/start.ts'
import { createHttpServer } from '../../server/http/http-server.ts'
import type { Config } from '../../server/config/load-config.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let setup: TestServer
let edge: RunningServer
let api: string
let token: string
const logged: { level: number; msg: string; err?: unknown }[] = []

beforeAll(async () => {
  setup = await startTestServer({ config: { Server: { HeadersTimeoutSeconds: 1, RequestTimeoutSeconds: 2, MaxHeaderBytes: 16384 } } })
  // A second instance on the same configuration, whose log the tests read.
  const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) })
  edge = await startServer({ configPath: setup.configPath, port: 0, logger })
  api = `${edge.url}/api`
  token = await setup.token()
})
afterAll(async () => {
  await edge?.stop()
  await setup?.stop()
})

const port = () => Number(new URL(edge.url).port)

interface RawAnswer {
  readonly text: string
  readonly status: number | undefined
  readonly body: any
  readonly error?: string
}

/** Sends `data` on a new connection and resolves, on close, with what came back. */
function raw(data: string | Buffer | readonly (string | Buffer)[], portNumber = port()): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(portNumber, '127.0.0.1')
    const chunks: Buffer[] = []
    let error: string | undefined
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code))
    socket.on('close', () => resolve(parseAnswer(Buffer.concat(chunks).toString('latin1'), error)))
    for (const part of Array.isArray(data) ? data : [data]) socket.write(part)
  })
}

function parseAnswer(text: string, error?: string): RawAnswer {
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1]
  const split = text.indexOf('\r\n\r\n')
  let body: any
  try {
    body = split < 0 ? undefined : JSON.parse(text.slice(split + 4))
  } catch {
    body = undefined
  }
  return { text, status: status ? Number(status) : undefined, body, error }
}

async function stillServing(): Promise<void> {
  const answer = await call(`${api}/Customers?$top=1`, { token })
  expect(answer.status).toBe(200)
}

/** How many zlib handles (each one inflater or deflater) the process made while `run` ran. */
async function zlibHandlesMadeWhile(run: () => Promise<void>): Promise<number> {
  let made = 0
  const hook = createHook({
    init(_id, type) {
      if (type === 'ZLIB') made++
    },
  }).enable()
  try {
    await run()
  } finally {
    hook.disable()
  }
  return made
}

function errorLines(): unknown[] {
  return logged.filter((line) => line.level >= 50)
}

describe('compressed request bodies', () => {
  const garbage = Buffer.from('this is not compressed at all')
  const body = Buffer.from(JSON.stringify({ Name: 'Zipped', Country: 'CH' }))

  it.each([
    ['gzip', garbage],
    ['gzip', gzipSync(body).subarray(0, 12)],
    ['deflate', garbage],
    ['br', garbage],
  ])('answers a corrupt %s body with 400 and an OData error, logging no error', async (encoding, bytes) => {
    const response = await fetch(`${api}/Customers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': encoding },
      body: bytes,
    })
    expect(response.status).toBe(400)
    const answer = (await response.json()) as any
    expect(answer.error).toMatchObject({ code: 'InvalidRequest', message: expect.stringContaining(`not valid ${encoding} data`) })
    expect(errorLines()).toEqual([])
    await stillServing()
  })

  it('answers an unknown Content-Encoding with 415', async () => {
    const answer = await call(`${api}/Customers`, { method: 'POST', token, body: '{}', headers: { 'Content-Encoding': 'zstd-or-so' } })
    expect(answer.status).toBe(415)
    expect(answer.body.error).toMatchObject({ code: 'UnsupportedMediaType', message: expect.stringContaining("Content-Encoding 'zstd-or-so' is not supported") })
  })

  it('reads valid gzip, deflate and br bodies, the coding named in any case', async () => {
    for (const [encoding, bytes] of [['gzip', gzipSync(body)], ['deflate', deflateSync(body)], ['br', brotliCompressSync(body)], ['GZip', gzipSync(body)]] as const) {
      const response = await fetch(`${api}/Customers?$select=Name`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': encoding },
        body: bytes,
      })
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ Name: 'Zipped' })
    }
  })

  it('inflates a compressed body once, whether it is read, refused as no UTF-8 or as too large', async () => {
    const latin1 = Buffer.from(JSON.stringify({ Name: 'Z\u00fcrich', Country: 'CH' }), 'latin1')
    const tooLarge = Buffer.from(`{"Name":"${' '.repeat(2 * 1024 * 1024)}"}`)
    const cases = [
      ['gzip', gzipSync(body), 200],
      ['deflate', deflateSync(body), 200],
      ['br', brotliCompressSync(body), 200],
      ['br', brotliCompressSync(latin1), 400],
      ['gzip', gzipSync(tooLarge), 413],
    ] as const
    for (const [encoding, bytes, status] of cases) {
      // Every inflater, gzip, deflate or br, streaming or not, is a zlib handle of the process.
      const made = await zlibHandlesMadeWhile(async () => {
        const response = await fetch(`${api}/Customers?$select=Name`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': encoding },
          body: bytes,
        })
        expect(response.status, encoding).toBe(status)
        await response.arrayBuffer()
      })
      expect(made, `${encoding} answered ${status}`).toBe(1)
    }
  })

  it('stops inflating a body at ApiOptions:MaxBodyBytes: a zip bomb is 413, and the server goes on serving', async () => {
    // 64 MiB of spaces inside a string, about 64 KB sent.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"Name":"'), Buffer.alloc(64 * 1024 * 1024, 32), Buffer.from('"}')]))
    expect(bomb.length).toBeLessThan(128 * 1024)
    const response = await fetch(`${api}/Customers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: bomb,
    })
    expect(response.status).toBe(413)
    expect(((await response.json()) as { error: unknown }).error).toMatchObject({ code: 'PayloadTooLarge', message: expect.stringContaining('ApiOptions:MaxBodyBytes') })
    await stillServing()
  })

  it('does not read the body of a request without valid credentials: 401 before the body', async () => {
    const answer = await call(`${api}/Customers`, { method: 'POST', body: garbage.toString(), headers: { 'Content-Encoding': 'gzip' } })
    expect(answer.status).toBe(401)
    const signIn = await call(`${api}/auth/signin`, { method: 'POST', body: garbage.toString(), headers: { 'Content-Encoding': 'gzip' } })
    expect(signIn.status).toBe(400)
    expect(signIn.body.error.message).toContain('not valid gzip data')
  })
})

describe('NUL and other text PostgreSQL cannot hold', () => {
  it("answers $filter=Name eq 'a%00b' with 400 before any SQL", async () => {
    const answer = await call(`${api}/Customers?$filter=Name%20eq%20'a%00b'`, { token })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: 'InvalidQuery', message: expect.stringContaining('a NUL character (%00)') })
    await stillServing()
  })

  it('answers %00 in a key and invalid UTF-8 escapes with 400', async () => {
    for (const path of [`Customers('a%00b')`, `Customers?$filter=Name%20eq%20'a%C3%28'`, `Customers?$filter=Name%20eq%20'%FF'`]) {
      const answer = await call(`${api}/${path}`, { token })
      expect(answer.status, path).toBe(400)
      expect(answer.body.error.code, path).toBe('InvalidQuery')
    }
  })

  it.each([
    ['a NUL', '{"Name":"a\\u0000b","Country":"CH"}', 'a NUL character', 'Name'],
    ['a lone high surrogate', '{"Name":"a\\ud800b","Country":"CH"}', 'an unpaired UTF-16 surrogate', 'Name'],
    ['a lone low surrogate', '{"Name":"\\udc00","Country":"CH"}', 'an unpaired UTF-16 surrogate', 'Name'],
    ['a NUL in a name', '{"N\\u0000":1}', 'a NUL character', 'N\u0000'],
    ['a NUL deep inside', '{"Name":"x","Orders":[{"Lines":[{"Note":"\\u0000"}]}]}', 'a NUL character', 'Orders/0/Lines/0/Note'],
  ])('answers a JSON body with %s with 400 naming where', async (_what, text, problem, target) => {
    const answer = await call(`${api}/Customers`, { method: 'POST', token, body: text })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: 'InvalidRequest', target, message: expect.stringContaining(problem) })
  })

  it('answers a body that is not UTF-8 with 400 instead of storing U+FFFD in its place, and takes a U+FFFD sent as UTF-8', async () => {
    const send = (bytes: number[], contentType = 'application/json') =>
      fetch(`${api}/Customers?$select=Name`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType }, body: new Uint8Array(bytes) })
    const json = (text: string) => [...Buffer.from(text, 'latin1')]
    // "Zürich" in Latin-1: ü is the single byte 0xFC, no UTF-8.
    for (const contentType of ['application/json', 'application/json; charset=iso-8859-1']) {
      const latin1 = await send(json('{"Name":"Z\u00fcrich","Country":"CH"}'), contentType)
      expect(latin1.status, contentType).toBe(400)
      expect(((await latin1.json()) as { error: unknown }).error).toMatchObject({ code: 'InvalidRequest', message: expect.stringContaining('The request body is not UTF-8') })
    }
    const replacement = await send([...Buffer.from('{"Name":"Z\u00fcrich \ufffd","Country":"CH"}', 'utf8')])
    expect(replacement.status).toBe(200)
    expect(((await replacement.json()) as { Name: string }).Name).toBe('Z\u00fcrich \ufffd')
  })

  it('checks the bytes a gzip, deflate or br body inflates to, or an identity one, are UTF-8, storing nothing', async () => {
    const name = `Z\u00fcrich ${Date.now()}`
    // "ü" in Latin-1 (the single byte 0xFC), no UTF-8: the decoder would store U+FFFD in its place.
    const latin1 = Buffer.from(JSON.stringify({ Name: name, Country: 'CH' }), 'latin1')
    const codings = [['gzip', gzipSync(latin1)], ['deflate', deflateSync(latin1)], ['br', brotliCompressSync(latin1)], ['identity', latin1]] as const
    for (const [encoding, bytes] of codings) {
      const response = await fetch(`${api}/Customers`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': encoding },
        body: bytes,
      })
      expect(response.status, encoding).toBe(400)
      expect(((await response.json()) as { error: unknown }).error, encoding).toMatchObject({ code: 'InvalidRequest', message: expect.stringContaining('The request body is not UTF-8') })
    }
    const stored = await call(`${api}/Customers?$filter=startswith(Name,'Z')%20and%20endswith(Name,'${name.slice(-13)}')&$count=true`, { token })
    expect(stored.status).toBe(200)
    expect(stored.body['@odata.count']).toBe(0)
  })

  it('accepts astral characters (a surrogate pair) in a body', async () => {
    const answer = await call(`${api}/Customers?$select=Name`, { method: 'POST', token, body: { Name: 'Emoji 😀', Country: 'CH' } })
    expect(answer.status).toBe(200)
    expect(answer.body.Name).toBe('Emoji 😀')
  })

  it('answers a NUL in a sign-in body with 400', async () => {
    const answer = await call(`${api}/auth/signin`, { method: 'POST', body: JSON.stringify({ TenantId: setup.tenants[0], Username: 'admin\u0000', Password: 'x' }) })
    expect(answer.status).toBe(400)
  })
})

describe('query limits', () => {
  it('refuses a 300-term or chain as QueryLimitExceeded naming MaxNodeCount, the count and the limit', async () => {
    const chain = Array.from({ length: 300 }, (_, i) => `Name eq 'n${i}'`).join(' or ')
    const answer = await call(`${api}/Customers?$filter=${encodeURIComponent(chain)}`, { token })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'MaxNodeCount', message: 'MaxNodeCount is 100; the request asks for 1199.' })
  })

  it('refuses aliases that double with each other as QueryLimitExceeded, before any SQL, and an alias naming itself as 400', async () => {
    // Each alias doubles the one before: 2^24 copies of Name ran the process out of memory.
    const doubled = (length: number, name: (i: number) => string) =>
      Array.from({ length }, (_, i) => `concat(${i ? name(i - 1) : 'Name'},${i ? name(i - 1) : 'Name'})`)
    const parameters = doubled(24, (i) => `@a${i}`).map((value, i) => `@a${i}=${encodeURIComponent(value)}`).join('&')
    const computed = doubled(24, (i) => `A${i}`).map((value, i) => `${value} as A${i}`)
    // 16 compute() steps, 80 nodes as written, stayed under MaxNodeCount: 2^16 copies per row.
    const applied = doubled(16, (i) => `A${i}`).map((value, i) => `compute(${value} as A${i})`).join('/')
    for (const query of [`$filter=@a23%20eq%20'x'&${parameters}`, `$compute=${encodeURIComponent(computed.join(','))}&$select=A23`, `$apply=${encodeURIComponent(applied)}`]) {
      const answer = await call(`${api}/Customers?${query}`, { token })
      expect(answer.status, query.slice(0, 40)).toBe(400)
      expect(answer.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'MaxNodeCount' })
    }
    const looping = await call(`${api}/Customers?$filter=${encodeURIComponent("@a eq 'x'")}&@a=${encodeURIComponent("concat(@a,'x')")}`, { token })
    expect(looping.status).toBe(400)
    expect(looping.body.error).toMatchObject({ code: 'InvalidQuery', target: '@a' })
  })
})

describe('request heads', () => {
  it('answers an over-long head with 431 and an OData error, every time, not a reset', async () => {
    const head = `GET /api/Customers HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(64 * 1024)}\r\n\r\n`
    for (let i = 0; i < 5; i++) {
      // More keeps coming after the head: a server closing with it unread would reset.
      const answer = await raw([head, 'x'.repeat(256 * 1024)])
      expect(answer.status, `attempt ${i}: ${answer.error ?? answer.text.slice(0, 40)}`).toBe(431)
      expect(answer.body.error).toMatchObject({ code: 'HeadersTooLarge', message: expect.stringContaining('Server:MaxHeaderBytes') })
    }
    await stillServing()
  })

  it('closes a slow head after Server:HeadersTimeoutSeconds with 408', async () => {
    const answer = await raw('GET /api/Customers HTTP/1.1\r\nHost: x\r\nX-Slow: ')
    expect(answer.status).toBe(408)
    expect(answer.body.error).toMatchObject({ code: 'RequestTimeout', message: expect.stringContaining('Server:HeadersTimeoutSeconds') })
    await stillServing()
  })

  it('closes a slow body after Server:RequestTimeoutSeconds with 408', async () => {
    const head = `POST /api/Customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`
    const answer = await raw([head, '{"Name":'])
    expect(answer.status).toBe(408)
    expect(answer.body.error).toMatchObject({ code: 'RequestTimeout', message: expect.stringContaining('Server:RequestTimeoutSeconds') })
    expect(errorLines()).toEqual([])
    await stillServing()
  })

  it('answers CONNECT with 501 and an OData error', async () => {
    const answer = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    expect(answer.status).toBe(501)
    expect(answer.body.error).toMatchObject({ code: 'NotImplemented', message: expect.stringContaining('not a proxy') })
    await stillServing()
  })

  it.each([
    ['garbage', 400, 'this is not http\r\n\r\n'],
    ['a bad header', 400, 'GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'],
    ['a bad chunk size', 400, 'POST /api/Customers HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
    ['an HTTP/2 preface', 400, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
  ])('answers %s with %i and an OData error', async (_what, status, data) => {
    const answer = await raw(data)
    expect(answer.status).toBe(status)
    expect(answer.body.error.code).toEqual(expect.any(String))
    await stillServing()
  })
})

describe('the server limits', () => {
  const limits = { HeadersTimeoutSeconds: 20, RequestTimeoutSeconds: 120, KeepAliveTimeoutSeconds: 65, MaxHeaderBytes: 65536, MaxConnections: 1000 }
  const silent = pino({ level: 'silent' })

  it('sets Node\'s limits from Server:*', () => {
    const server = createHttpServer(() => {}, { Server: limits } as unknown as Config, silent)
    expect(server).toMatchObject({ headersTimeout: 20_000, requestTimeout: 120_000, keepAliveTimeout: 65_000, maxConnections: 1000 })
  })
})

describe('connections', () => {
  it('closes connections above Server:MaxConnections at once and serves again when one ends', async () => {
    process.env.Server__MaxConnections = '3'
    const warnings: { msg: string; maxConnections?: number }[] = []
    let capped: RunningServer
    try {
      capped = await startServer({ configPath: setup.configPath, port: 0, logger: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) }) })
    } finally {
      delete process.env.Server__MaxConnections
    }
    const cappedPort = Number(new URL(capped.url).port)
    const held: Socket[] = []
    try {
      // Three keep-alive connections, each answered once, so the server has surely accepted them.
      for (let i = 0; i < 3; i++) held.push(await keptAlive(cappedPort))
      const refused = await raw('GET /api/ HTTP/1.1\r\nHost: x\r\n\r\n', cappedPort)
      expect(refused.text).toBe('')
      expect(warnings).toContainEqual(expect.objectContaining({ msg: 'connections refused: Server:MaxConnections reached', maxConnections: 3 }))
      held.pop()!.destroy()
      // The server counts the closed connection once it sees it close: ask until it has.
      let answer: RawAnswer | undefined
      for (let attempt = 0; attempt < 100 && answer?.status === undefined; attempt++) {
        answer = await raw('GET /api/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', cappedPort)
      }
      expect(answer?.status).toBe(401)
    } finally {
      for (const socket of held) socket.destroy()
      await capped.stop()
    }
  })
})

/** A connection that has had one answer and stays open. */
function keptAlive(portNumber: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(portNumber, '127.0.0.1')
    socket.once('error', reject)
    socket.once('data', () => resolve(socket))
    socket.write('GET /api/ HTTP/1.1\r\nHost: x\r\n\r\n')
  })
}
