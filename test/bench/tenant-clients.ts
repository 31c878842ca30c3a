// --connections clients (default 16) share all the tenants, round robin: at each turn a
// client takes the next tenant, signs in to it on its first turn and every SIGN_IN_EVERY-th
// after (so sign-ins are measured under the load too), and sends a key read
// (`Customers(<key>)`, the key found by the tenant's first read). Every answer is counted by
// status; failures keep the first few texts, for the report.
import { Agent } from 'node:http'
import { ENTITYCTL_API_ROOT } from './entityctl-process.ts'
import { httpRequest } from './http-request.ts'
import type { HttpAnswer } from './http-request.ts'

export const TENANT_READ = 'Customers(<key>)'
const FIRST_READ = 'Customers?$top=1&$select=Guid'
const SIGN_IN_EVERY = 10

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

export async function runTenantClients(
  origin: string, tenants: string[], credentials: { username: string; password: string; connections: number }, seconds: number,
): Promise<TenantClientsResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: credentials.connections })
  const statusCodes: Record<string, number> = {}
  const failures: string[] = []
  const signInTimes: number[] = []
  const readTimes: number[] = []
  const readsOf = new Map<string, number>()
  const state = new Map<string, { token?: string; key?: string; turns: number }>(tenants.map((tenant) => [tenant, { turns: 0 }]))
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
  const deadline = Date.now() + seconds * 1000
  let next = 0
  const turn = async (tenant: string) => {
    const own = state.get(tenant)!
    if (!own.token || own.turns % SIGN_IN_EVERY === 0) {
      const body = JSON.stringify({ TenantId: tenant, Username: credentials.username, Password: credentials.password })
      const signedIn = await send(signInTimes, 'POST', 'auth/signin', {}, body)
      signIns++
      if (signedIn?.status !== 200) return
      own.token = (JSON.parse(signedIn.text) as { accessToken: string }).accessToken
    }
    own.turns++
    const headers = { authorization: `Bearer ${own.token}` }
    if (!own.key) {
      const first = await send(undefined, 'GET', FIRST_READ, headers)
      if (first?.status !== 200) return
      own.key = (JSON.parse(first.text) as { value: { Guid: string }[] }).value[0]?.Guid
      if (!own.key) return
    }
    const answer = await send(readTimes, 'GET', `Customers(${own.key})`, headers)
    if (answer?.status === 200) readsOf.set(tenant, (readsOf.get(tenant) ?? 0) + 1)
  }
  const client = async () => {
    while (Date.now() < deadline) await turn(tenants[next++ % tenants.length])
  }
  try {
    await Promise.all(Array.from({ length: credentials.connections }, client))
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
