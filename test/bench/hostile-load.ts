// The soak's hostile share (issue #15): a few clients beside the workload's autocannon sending,
// one after another until the end, requests no well-behaved client sends:
//   fuzz        requests sampled (fixed seed) from the fuzz test's arbitraries
//               (test/http/hostile-requests.ts): bad filters, odd bodies, forged tokens, corrupt
//               encodings, over-long heads, …
//   deepExpand  $expand five levels deep (MaxExpansionDepth) over the full dataset
//   nearLimit   bodies just under and just over ApiOptions:MaxBodyBytes (1 MiB)
//   signIn      failed sign-ins: wrong password of the bench user, unknown users and tenants
//   disconnect  clients that go away mid-request: in the head, in the body, and while a heavy
//               read is being answered
// Every request but the deliberate disconnects is bounded by a timeout; outcomes are counted per
// kind and status class. Answers are not judged here (the fuzz test does that); 5xx answers and
// requests left without an answer are reported.
import fc from 'fast-check'
import { connect } from 'node:net'
import { forgedTokens, hostileRequests, type HostileContext, type HostileKeys, type HostileRequest } from '../http/hostile-requests.ts'
import { NoAnswer, sendRaw } from '../http/send-raw.ts'

export type HostileKind = 'fuzz' | 'deepExpand' | 'nearLimit' | 'signIn' | 'disconnect'

export type HostileCounts = Record<HostileKind, Record<string, number>>

export type HostileSummary = {
  requests: number
  /** Per kind: status classes (2xx, 4xx, 501, 5xx), `noAnswer`, `disconnected` (on purpose). */
  counts: HostileCounts
  /** 5xx other than 501, over all kinds. */
  serverErrors: number
  noAnswer: number
  /** A few of the requests that got a 5xx or no answer, for the report. */
  examples: string[]
}

export type HostileSetup = {
  origin: string
  /** Keys of rows made for the hostile share, never those the workload reads or writes. */
  keys: HostileKeys
  tenant: string
  username: string
  /** Authorization header values of the bench user (full access) and of a user without roles. */
  admin: string
  restricted: string
  jwt: { signingKey: string; issuer: string; audience: string }
  maxBodyBytes: number
}

const KINDS: readonly HostileKind[] = ['fuzz', 'fuzz', 'fuzz', 'fuzz', 'fuzz', 'deepExpand', 'nearLimit', 'signIn', 'signIn', 'disconnect', 'disconnect']
const FUZZ_SAMPLES = 3_000
const SEED = 15_2026
const TIMEOUT_MS = 30_000

export type HostileLoad = (clients: number, stopAt: number) => Promise<HostileSummary>

/**
 * Makes the hostile requests (a few seconds of work, done before the load starts so it does not
 * stall the runner's autocannon), and returns what runs `clients` hostile clients until `stopAt`
 * (ms since the epoch).
 */
export async function prepareHostileLoad(setup: HostileSetup): Promise<HostileLoad> {
  const forged = await forgedTokens({ ...setup.jwt, tenant: setup.tenant, otherUserGuid: '01a212a8-d75f-76ac-90d0-52af0aaf3a3a' })
  const context: HostileContext = { keys: setup.keys, credentials: { admin: setup.admin, restricted: setup.restricted, none: undefined, ...forged } }
  const fuzz = fc.sample(hostileRequests(context), { seed: SEED, numRuns: FUZZ_SAMPLES })
  const nearLimit = nearLimitBodies(setup)
  return (clients, stopAt) => runHostileLoad(setup, fuzz, nearLimit, clients, stopAt)
}

async function runHostileLoad(
  setup: HostileSetup, fuzz: HostileRequest[], nearLimit: ReturnType<typeof nearLimitBodies>, clients: number, stopAt: number,
): Promise<HostileSummary> {
  const counts = Object.fromEntries(['fuzz', 'deepExpand', 'nearLimit', 'signIn', 'disconnect'].map((kind) => [kind, {}])) as HostileCounts
  const summary: HostileSummary = { requests: 0, counts, serverErrors: 0, noAnswer: 0, examples: [] }
  const count = (kind: HostileKind, outcome: string, describe: () => string) => {
    summary.requests++
    counts[kind][outcome] = (counts[kind][outcome] ?? 0) + 1
    if (outcome === '5xx' || outcome === 'noAnswer') {
      if (outcome === '5xx') summary.serverErrors++
      else summary.noAnswer++
      if (summary.examples.length < 10) summary.examples.push(`${outcome}: ${describe()}`)
    }
  }
  let next = 0
  const client = async (id: number) => {
    for (let turn = id; Date.now() < stopAt; turn += clients) {
      const kind = KINDS[turn % KINDS.length]
      const n = next++
      const send = async (request: { method: string; path: string; headers: Record<string, string>; body?: Uint8Array }) => {
        try {
          const answer = await sendRaw(setup.origin, request, TIMEOUT_MS)
          count(kind, outcomeOf(answer.status), () => `${request.method} ${request.path.slice(0, 160)} → ${answer.status} ${answer.body.toString('utf8').slice(0, 160)}`)
        } catch (error) {
          if (!(error instanceof NoAnswer)) throw error
          count(kind, 'noAnswer', () => `${request.method} ${request.path.slice(0, 160)}: ${error.message}`)
        }
      }
      if (kind === 'fuzz') {
        const request = fuzz[n % fuzz.length]
        await send({ ...request, headers: { ...request.headers } })
      } else if (kind === 'deepExpand') {
        await send({ method: 'GET', path: DEEP_EXPANDS[n % DEEP_EXPANDS.length], headers: { authorization: setup.admin } })
      } else if (kind === 'nearLimit') {
        await send({ ...nearLimit[n % nearLimit.length], headers: { authorization: setup.admin, 'content-type': 'application/json' } })
      } else if (kind === 'signIn') {
        await send(failedSignIn(setup, n))
      } else {
        await disconnect(setup, n)
        count(kind, 'disconnected', () => '')
      }
    }
  }
  await Promise.all(Array.from({ length: clients }, (_, id) => client(id)))
  return summary
}

function outcomeOf(status: number): string {
  if (status === 501) return '501'
  return `${Math.floor(status / 100)}xx`
}

/** Five levels of $expand, within MaxExpansionDepth, over the benchmark's customers and orders. */
const DEEP_EXPANDS = [
  "/api/Customers?$top=50&$select=Name&$expand=Orders($select=Number;$expand=Lines($select=Quantity;$expand=Product($select=Code),Order($select=Number;$expand=Customer($select=Name;$expand=Orders($select=Number;$top=3)))))",
  "/api/Orders?$top=200&$filter=Total%20gt%20100&$select=Number&$expand=Customer($select=Name;$expand=Orders($select=Total;$expand=Lines($expand=Product($select=Name))))",
  "/api/Products?$top=100&$select=Code&$count=true",
  "/api/Customers?$top=500&$select=Name,Country&$expand=Orders($select=Number,Total;$top=20;$orderby=OrderDate%20desc;$expand=Lines($select=Quantity,LineTotal))",
].map((path) => path.replaceAll(' ', '%20'))

/** A deep insert just under the body limit (refused by the rules, or written), and bodies just over it. */
function nearLimitBodies(setup: HostileSetup): { method: string; path: string; body: Uint8Array }[] {
  const under = setup.maxBodyBytes - 2_048
  const line = JSON.stringify({ Quantity: 1, 'Product@odata.bind': `Products(${setup.keys.product})` })
  const lines = Array(Math.floor(under / (line.length + 1))).fill(line).join(',')
  const manyLines = `{"Number":${Date.now() % 1_000_000_000},"Customer@odata.bind":"Customers(${setup.keys.customer})","Lines":[${lines}]}`
  const longName = JSON.stringify({ Name: 'x'.repeat(under - 20) })
  const over = JSON.stringify({ Name: 'x'.repeat(setup.maxBodyBytes + 10) })
  const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'))
  return [
    { method: 'POST', path: '/api/Orders?$select=Number', body: utf8(manyLines) },
    { method: 'PATCH', path: `/api/Customers(${setup.keys.customer})`, body: utf8(longName) },
    { method: 'POST', path: '/api/Customers', body: utf8(over) },
    { method: 'POST', path: '/api/Customers', body: utf8(longName) },
  ]
}

function failedSignIn(setup: HostileSetup, n: number): { method: string; path: string; headers: Record<string, string>; body: Uint8Array } {
  const attempts = [
    { TenantId: setup.tenant, Username: setup.username, Password: `wrong-${n}` },
    { TenantId: setup.tenant, Username: `nobody-${n % 50}`, Password: 'x' },
    { TenantId: `no-tenant-${n % 20}`, Username: setup.username, Password: 'x' },
    { TenantId: setup.tenant, Username: setup.username, Password: 'p'.repeat(10_000) },
  ]
  const body = new Uint8Array(Buffer.from(JSON.stringify(attempts[n % attempts.length])))
  return { method: 'POST', path: '/api/auth/signin', headers: { 'content-type': 'application/json' }, body }
}

/** A client that goes away: in the head, in the middle of its body, or while its heavy read runs. */
function disconnect(setup: HostileSetup, n: number): Promise<void> {
  const url = new URL(setup.origin)
  const heavy = DEEP_EXPANDS[n % DEEP_EXPANDS.length]
  const scripts = [
    `GET ${heavy} HTTP/1.1\r\nHost: x\r\nAuthorization: ${setup.admin}\r\n\r\n`,
    `GET /api/Orders?$apply=groupby((Customer/Country),aggregate(Total%20with%20sum%20as%20R)) HTTP/1.1\r\nHost: x\r\nAuthorization: ${setup.admin}\r\n\r\n`,
    `POST /api/Orders HTTP/1.1\r\nHost: x\r\nAuthorization: ${setup.admin}\r\nContent-Type: application/json\r\nContent-Length: 500000\r\n\r\n{"Number":1,"Lines":[`,
    `GET /api/Customers?$top=5 HTTP/1.1\r\nHost: x\r\nAuthoriz`,
  ]
  const script = scripts[n % scripts.length]
  const waitMs = [5, 20, 60, 150][Math.floor(n / scripts.length) % 4]
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.write(script)
      setTimeout(() => socket.destroy(), waitMs)
    })
    socket.on('data', () => {})
    socket.on('error', () => {})
    socket.on('close', () => resolve())
  })
}
