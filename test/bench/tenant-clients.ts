// One client per tenant, all at once: each signs in to its tenant, then sends a light read
// (`Customers?$top=1`) after another until the deadline, on a keep-alive socket of its own.
// Every answer is counted by status; failures keep the first few texts, for the report.
import { Agent } from 'node:http'
import { ENTITYCTL_API_ROOT } from './entityctl-process.ts'
import { httpRequest } from './http-request.ts'
import type { HttpAnswer } from './http-request.ts'

export const TENANT_READ = 'Customers?$top=1'

/** A request unanswered this long counts as failed (and the run stays bounded in time). */
const REQUEST_TIMEOUT_MS = 60_000

export type TenantClientsResult = {
  /** Requests answered, sign-ins included, by status ('error' for no answer at all). */
  statusCodes: Record<string, number>
  signIns: number
  reads: number
  failed: number
  /** Tenants none of whose reads succeeded. */
  tenantsWithoutRead: string[]
  failures: string[]
  p50Ms: number
  p99Ms: number
  maxMs: number
}

export async function runTenantClients(
  origin: string, tenants: string[], credentials: { username: string; password: string }, seconds: number,
): Promise<TenantClientsResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: tenants.length })
  const statusCodes: Record<string, number> = {}
  const failures: string[] = []
  const times: number[] = []
  const readsOf = new Map<string, number>()
  let signIns = 0
  const send = async (method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer | undefined> => {
    const t0 = performance.now()
    try {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS)
      })
      const answer = await Promise.race([httpRequest(origin, method, ENTITYCTL_API_ROOT + path, headers, body, agent), timeout])
        .finally(() => clearTimeout(timer))
      times.push(performance.now() - t0)
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
  const client = async (tenant: string) => {
    const body = JSON.stringify({ TenantId: tenant, Username: credentials.username, Password: credentials.password })
    const signedIn = await send('POST', 'auth/signin', {}, body)
    signIns++
    if (signedIn?.status !== 200) return
    const headers = { authorization: `Bearer ${(JSON.parse(signedIn.text) as { accessToken: string }).accessToken}` }
    while (Date.now() < deadline) {
      const answer = await send('GET', TENANT_READ, headers)
      if (answer?.status === 200) readsOf.set(tenant, (readsOf.get(tenant) ?? 0) + 1)
    }
  }
  try {
    await Promise.all(tenants.map(client))
  } finally {
    agent.destroy()
  }
  times.sort((a, b) => a - b)
  const at = (fraction: number) => Math.round((times[Math.min(times.length - 1, Math.ceil(fraction * times.length) - 1)] ?? 0) * 10) / 10
  const answered = Object.values(statusCodes).reduce((sum, count) => sum + count, 0)
  return {
    statusCodes,
    signIns,
    reads: answered - signIns,
    failed: answered - (statusCodes['200'] ?? 0),
    tenantsWithoutRead: tenants.filter((tenant) => !readsOf.has(tenant)),
    failures,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: at(1),
  }
}
