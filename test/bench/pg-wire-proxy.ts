// A TCP proxy in front of PostgreSQL that counts the SQL statements passing through it, per
// database. It is how the runner counts statements when pg_stat_statements is not loaded (it
// must be in shared_preload_libraries, which needs a server restart): a server under test is
// pointed at the proxy instead of PostgreSQL for the checking phase, never while load-testing.
//
// It reads the frontend protocol (PostgreSQL docs, "Message Formats"): the startup packet names
// the database; each Execute ('E') is one statement of the extended protocol, whose text comes
// from the Parse ('P') of the statement its portal was bound ('B') to; a simple Query ('Q') counts
// its semicolon-separated statements. Busy time runs from a Sync or Query to the ReadyForQuery
// that answers it: the statements' time in PostgreSQL plus a loopback round trip.
import { createServer, connect } from 'node:net'
import type { Server, Socket } from 'node:net'

export type WireTotals = { statements: number; busyMs: number; texts: string[] }

export type WireProxy = {
  port: number
  /** Totals so far for one database. */
  totals(database: string): { statements: number; busyMs: number }
  /** Statement texts are kept from `recordTexts()` until `takeTexts()`, at most MAX_TEXTS. */
  recordTexts(): void
  takeTexts(database: string): string[]
  recording: boolean
  close(): Promise<void>
}

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const MAX_TEXTS = 200

export async function startWireProxy(upstreamHost: string, upstreamPort: number): Promise<WireProxy> {
  const byDatabase = new Map<string, WireTotals>()
  const sockets = new Set<Socket>()
  const proxy: WireProxy = {
    port: 0,
    recording: false,
    totals: (database) => {
      const { statements = 0, busyMs = 0 } = byDatabase.get(database) ?? {}
      return { statements, busyMs }
    },
    recordTexts: () => {
      for (const totals of byDatabase.values()) totals.texts = []
      proxy.recording = true
    },
    takeTexts: (database) => {
      proxy.recording = false
      return byDatabase.get(database)?.texts ?? []
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
  const totalsOf = (database: string) => {
    let totals = byDatabase.get(database)
    if (!totals) byDatabase.set(database, (totals = { statements: 0, busyMs: 0, texts: [] }))
    return totals
  }

  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, upstreamHost)
    sockets.add(client).add(upstream)
    const session = new Session(proxy, totalsOf)
    client.on('data', (chunk: Buffer) => {
      session.fromClient(chunk)
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      session.fromServer(chunk)
      client.write(chunk)
    })
    const closeBoth = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('close', closeBoth).on('error', closeBoth)
    upstream.on('close', closeBoth).on('error', closeBoth)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  proxy.port = typeof address === 'object' && address ? address.port : 0
  return proxy
}

/** One client connection: splits both byte streams into protocol messages. */
class Session {
  private proxy: WireProxy
  private totalsOf: (database: string) => WireTotals
  private totals: WireTotals | undefined
  private startup = true
  private opaque = false
  private awaitingEncryptionAnswer = false
  private clientBuffer = Buffer.alloc(0)
  private serverBuffer = Buffer.alloc(0)
  private statements = new Map<string, string>()
  private portals = new Map<string, string>()
  private pendingSyncs = 0
  private busySince = 0

  constructor(proxy: WireProxy, totalsOf: (database: string) => WireTotals) {
    this.proxy = proxy
    this.totalsOf = totalsOf
  }

  fromClient(chunk: Buffer): void {
    if (this.opaque) return
    this.clientBuffer = Buffer.concat([this.clientBuffer, chunk])
    for (;;) {
      const buffer = this.clientBuffer
      if (this.startup) {
        // Startup-phase packets have no type byte: Int32 length, Int32 code, parameters.
        if (buffer.length < 8 || buffer.length < buffer.readInt32BE(0)) return
        const length = buffer.readInt32BE(0)
        const code = buffer.readInt32BE(4)
        // An encryption request is answered by one byte, 'N' (go on in clear) or 'S'/'G'.
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) this.awaitingEncryptionAnswer = true
        else this.startSession(buffer.subarray(8, length))
        this.clientBuffer = buffer.subarray(length)
        continue
      }
      if (buffer.length < 5 || buffer.length < 1 + buffer.readInt32BE(1)) return
      const end = 1 + buffer.readInt32BE(1)
      this.clientMessage(buffer[0], buffer.subarray(5, end))
      this.clientBuffer = buffer.subarray(end)
    }
  }

  fromServer(chunk: Buffer): void {
    if (this.opaque) return
    if (this.awaitingEncryptionAnswer) {
      this.awaitingEncryptionAnswer = false
      // Encrypted traffic cannot be read: such a session is passed through uncounted.
      if (chunk[0] !== 0x4e) this.opaque = true
      chunk = chunk.subarray(1)
    }
    if (this.opaque || this.startup) return
    this.serverBuffer = Buffer.concat([this.serverBuffer, chunk])
    for (;;) {
      const buffer = this.serverBuffer
      if (buffer.length < 5 || buffer.length < 1 + buffer.readInt32BE(1)) return
      const end = 1 + buffer.readInt32BE(1)
      // ReadyForQuery ('Z') answers one Sync or Query: the session is idle when none is pending.
      if (buffer[0] === 0x5a && this.pendingSyncs > 0 && --this.pendingSyncs === 0 && this.totals) {
        this.totals.busyMs += performance.now() - this.busySince
      }
      this.serverBuffer = buffer.subarray(end)
    }
  }

  private startSession(parameters: Buffer): void {
    const fields = parameters.toString('utf8').split('\0')
    const value = (key: string) => {
      const index = fields.indexOf(key)
      return index >= 0 && index % 2 === 0 ? fields[index + 1] : undefined
    }
    this.totals = this.totalsOf(value('database') ?? value('user') ?? '')
    this.startup = false
  }

  private clientMessage(type: number, body: Buffer): void {
    const totals = this.totals
    if (!totals) return
    switch (String.fromCharCode(type)) {
      case 'P': {
        const [name, text] = cStrings(body, 2)
        this.statements.set(name, text)
        break
      }
      case 'B': {
        const [portal, statement] = cStrings(body, 2)
        this.portals.set(portal, this.statements.get(statement) ?? '?')
        break
      }
      case 'E':
        this.count(totals, this.portals.get(cStrings(body, 1)[0]) ?? '?', 1)
        break
      case 'Q': {
        const text = cStrings(body, 1)[0]
        this.count(totals, text, countStatements(text))
        this.waitForReady()
        break
      }
      case 'S':
        this.waitForReady()
        break
      case 'C':
        // Close of a statement ('S') or portal ('P'): forget its text.
        if (body[0] === 0x53) this.statements.delete(cStrings(body.subarray(1), 1)[0])
        break
    }
  }

  private count(totals: WireTotals, text: string, statements: number): void {
    totals.statements += statements
    if (this.proxy.recording && totals.texts.length < MAX_TEXTS) totals.texts.push(text)
  }

  private waitForReady(): void {
    if (this.pendingSyncs++ === 0) this.busySince = performance.now()
  }
}

/** The first `count` NUL-terminated strings of a message body. */
function cStrings(body: Buffer, count: number): string[] {
  const strings: string[] = []
  let start = 0
  while (strings.length < count) {
    const end = body.indexOf(0, start)
    if (end < 0) break
    strings.push(body.toString('utf8', start, end))
    start = end + 1
  }
  while (strings.length < count) strings.push('')
  return strings
}

/** Statements in a simple-protocol query: semicolons outside quotes, comments ignored. */
export function countStatements(text: string): number {
  let statements = 0
  let content = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1)
      i = close < 0 ? text.length : close
      content = true
    } else if (c === '-' && text[i + 1] === '-') {
      const newline = text.indexOf('\n', i)
      i = newline < 0 ? text.length : newline
    } else if (c === ';') {
      if (content) statements++
      content = false
    } else if (!/\s/.test(c)) {
      content = true
    }
  }
  return statements + (content ? 1 : 0)
}
