// All the tenants, then --connections clients (default 16) sharing them round robin. First,
// unmeasured, every tenant is made ready: its user signs in and the key of a customer is found
// (one is created in a tenant without). Then, measured for --duration seconds, a client takes
// the next tenant at each turn and sends a key read (`Customers(<key>)`), signing in again
// every SIGN_IN_EVERY-th turn of that tenant (so sign-ins are measured under the load, as one
// request in SIGN_IN_EVERY). Each tenant's sign-ins have their own phase: in lockstep, every
// tenant's 20th turn fell in the same round, and sign-ins came as a burst of one per tenant
// queued behind each other's password hashing, which independent clients do not do. Every
// answer is counted by status; failures keep the first few texts, for the report.
import { Agent } from 'node:http'
import { ENTITYCTL_API_ROOT } from './entityctl-process.ts'
import { httpRequest } from './http-request.ts'
import type { HttpAnswer } from './http-request.ts'

export const TENANT_READ = 'Customers(<key>)'
const FIRST_READ = 'Customers?$top=1&$select=Guid'
const SIGN_IN_EVERY = 20

/** A request unanswered this long counts as failed (and the run stays bounded in time). */
const REQUEST_TIMEOUT_MS = 60_000

export type Percentiles = { p50Ms: number; p95Ms: number; p99Ms: number; maxMs: number }

export type TenantClientsResult = {
  /** Requests answered, sign-ins included, by status ('error' for no answer at all). */
  statusCodes: Record<string, number>
  signIns: number
  reads: number
  failed: number
  /** Tenants none of whose reads succeeded. */
  tenantsWithoutRead: string[]
  failures: string[]
  signIn: Percentiles
  keyRead: Percentiles
}

/** `onMeasuring`: called once every tenant is ready, before the measured turns start. */
export async function runTenantClients(
  origin: string, tenants: string[], credentials: { username: string; password: string; connections: number }, seconds: number,
  onMeasuring?: () => Promise<void>,
): Promise<TenantClientsResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: credentials.connections })
  const statusCodes: Record<string, number> = {}
  const failures: string[] = []
  const signInTimes: number[] = []
  const readTimes: number[] = []
  const readsOf = new Map<string, number>()
  const state = new Map<string, { token?: string; key?: string; turns: number; phase: number }>(
    tenants.map((tenant, index) => [tenant, { turns: 0, phase: index % SIGN_IN_EVERY }]),
  )
  let signIns = 0
  const send = async (times: number[] | undefined, method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer | undefined> => {
    const t0 = performance.now()
    try {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS)
      })
      const answer = await Promise.race([httpRequest(origin, method, ENTITYCTL_API_ROOT + path, headers, body, agent), timeout])
        .finally(() => clearTimeout(timer))
      times?.push(performance.now() - t0)
      statusCodes[answer.status] = (statusCodes[answer.status] ?? 0) + 1
      if (answer.status >= 300 && failures.length < 10) failures.push(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`)
      return answer
    } catch (error) {
      statusCodes.error = (statusCodes.error ?? 0) + 1
      if (failures.length < 10) failures.push(`${method} ${path}: ${(error as Error).message}`)
      return undefined
    }
  }
  const signInOf = async (tenant: string, times: number[] | undefined) => {
    const body = JSON.stringify({ TenantId: tenant, Username: credentials.username, Password: credentials.password })
    const signedIn = await send(times, 'POST', 'auth/signin', {}, body)
    signIns++
    if (signedIn?.status === 200) state.get(tenant)!.token = (JSON.parse(signedIn.text) as { accessToken: string }).accessToken
  }
  const prepare = async (tenant: string) => {
    const own = state.get(tenant)!
    await signInOf(tenant, undefined)
    if (!own.token) return
    const headers = { authorization: `Bearer ${own.token}`, 'content-type': 'application/json' }
    const first = await send(undefined, 'GET', FIRST_READ, headers)
    own.key = first?.status === 200 ? (JSON.parse(first.text) as { value: { Guid: string }[] }).value[0]?.Guid : undefined
    if (own.key) return
    const created = await send(undefined, 'POST', 'Customers', headers, JSON.stringify({ Name: 'Tenants bench' }))
    if (created?.status === 200 || created?.status === 201) own.key = (JSON.parse(created.text) as { Guid: string }).Guid
  }
  let next = 0
  const workers = (work: () => Promise<void>) => Promise.all(Array.from({ length: credentials.connections }, work))
  const turn = async (tenant: string) => {
    const own = state.get(tenant)!
    if (!own.key) return
    own.turns++
    if ((own.turns + own.phase) % SIGN_IN_EVERY === 0) await signInOf(tenant, signInTimes)
    const answer = await send(readTimes, 'GET', `Customers(${own.key})`, { authorization: `Bearer ${own.token}` })
    if (answer?.status === 200) readsOf.set(tenant, (readsOf.get(tenant) ?? 0) + 1)
  }
  try {
    await workers(async () => {
      while (next < tenants.length) await prepare(tenants[next++])
    })
    for (const key of Object.keys(statusCodes)) delete statusCodes[key]
    signIns = 0
    await onMeasuring?.()
    const deadline = Date.now() + seconds * 1000
    next = 0
    await workers(async () => {
      while (Date.now() < deadline) await turn(tenants[next++ % tenants.length])
    })
  } finally {
    agent.destroy()
  }
  const answered = Object.values(statusCodes).reduce((sum, count) => sum + count, 0)
  return {
    statusCodes,
    signIns,
    reads: answered - signIns,
    failed: answered - (statusCodes['200'] ?? 0),
    tenantsWithoutRead: tenants.filter((tenant) => !readsOf.has(tenant)),
    failures,
    signIn: percentiles(signInTimes),
    keyRead: percentiles(readTimes),
  }
}

function percentiles(times: number[]): Percentiles {
  times.sort((a, b) => a - b)
  const at = (fraction: number) => Math.round((times[Math.min(times.length - 1, Math.ceil(fraction * times.length) - 1)] ?? 0) * 10) / 10
  return { p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99), maxMs: at(1) }
}
