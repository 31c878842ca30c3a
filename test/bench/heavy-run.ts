// `npm run bench -- --heavy`: does a tenant's heavy query starve its cheap reads, or another
// tenant's (issue 15)? Two tenants on one entityctl (tenant-clones.ts), each with --heavy-orders
// orders (default 3,000) of 100 customers. Two phases of --duration seconds:
//   baseline  key-read clients on tenant A and tenant B, nothing else;
//   heavy     the same, while 4 clients send the nested lambda filter of the issue to tenant A
//             in a loop (each answered 200, or 503 once it passes ApiOptions:QueryTimeoutSeconds).
// A key read is `Customers(<guid>)?$select=Name`; its p50/p99/max per tenant and phase are the
// figures (README "Performance"). A key read unanswered in KEY_READ_TIMEOUT_MS counts as such.
// Results in .work/heavy-<timestamp>.json; the databases are dropped unless --keep-databases.
import { Agent } from 'node:http'
import { cpus } from 'node:os'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { SECTIONS } from '../../server/config/schema.ts'
import { databaseUrl, serverVersion, withClient } from './databases.ts'
import { ENTITYCTL_API_ROOT, startEntityctl } from './entityctl-process.ts'
import type { EntityctlSetup } from './entityctl-process.ts'
import { closeHttpAgent, httpRequest } from './http-request.ts'
import { REPO_ROOT, WORK_DIR } from './options.ts'
import type { Options } from './options.ts'
import { progressLog, saveRun } from './report.ts'
import { freePort } from './server-process.ts'
import type { ServerProcess } from './server-process.ts'
import { cloneTenants, dropRecordedDatabases } from './tenant-clones.ts'

const TENANT_PREFIX = 'benchheavy'
const CUSTOMERS = 100
const HEAVY_CLIENTS = 4
/** Key-read clients per tenant, each sending one read after another. */
const KEY_READ_CLIENTS = 2
const KEY_READ_TIMEOUT_MS = 15_000
/** The query: a three-deep lambda over the customer's orders, counted. */
export const HEAVY_READ =
  'Orders?$filter=Customer/Orders/any(a:a/Customer/Orders/any(b:b/Customer/Orders/any(c:c/Number%20eq%20-1)))&$count=true&$top=1&$select=Guid'

type Latencies = { reads: number; unanswered: number; statuses: Record<string, number>; p50Ms: number; p99Ms: number; maxMs: number }
type Phase = { tenantA: Latencies; tenantB: Latencies; heavy?: Latencies }

export async function runHeavy(options: Options): Promise<number> {
  const started = Date.now()
  const log = progressLog('heavy', started)
  const workDir = join(WORK_DIR, 'heavy')
  mkdirSync(workDir, { recursive: true })
  rmSync(join(workDir, 'entityctl.log'), { force: true })
  const setup: EntityctlSetup = {
    repoRoot: REPO_ROOT, workDir, serverUrl: options.serverUrl, tenant: TENANT_PREFIX,
    username: options.username, password: options.password, poolSize: options.poolSizeGiven ? options.poolSize : undefined,
  }
  const poolSize = setup.poolSize ?? SECTIONS.Database.PoolSizePerTenant.default
  let server: ServerProcess | undefined
  try {
    const tenants = await cloneTenants(setup, TENANT_PREFIX, 2)
    const customers = new Map<string, string>()
    for (const [i, database] of tenants.databases.entries()) {
      customers.set(tenants.names[i], await fillOrders(databaseUrl(options.serverUrl, database), options.heavyOrders))
    }
    log(`tenants ${tenants.names.join(', ')}: ${options.heavyOrders} orders of ${CUSTOMERS} customers each`)
    server = await startEntityctl(setup, options.serverUrl, await freePort())
    const origin = server.origin
    const tokens = new Map<string, string>()
    for (const tenant of tenants.names) tokens.set(tenant, await signIn(origin, tenant, options))
    const [a, b] = tenants.names
    const keyRead = (tenant: string) => ({ tenant, path: `Customers(${customers.get(tenant)})?$select=Name` })

    log(`one heavy query alone on ${a}: ${JSON.stringify(await measure(origin, tokens, [{ tenant: a, path: HEAVY_READ }], 1, 0))}`)
    log(`baseline: ${KEY_READ_CLIENTS} key-read clients per tenant for ${options.durationSeconds} s`)
    const baseline = await runPhase(origin, tokens, options.durationSeconds, [keyRead(a), keyRead(b)])
    log(`heavy: the same, with ${HEAVY_CLIENTS} clients sending the lambda query to ${a}`)
    const heavy = await runPhase(origin, tokens, options.durationSeconds, [keyRead(a), keyRead(b)], { tenant: a, path: HEAVY_READ })
    const phases = { baseline, heavy }
    console.log(`\n${formatPhases(phases, poolSize, options)}\n`)
    const file = saveRun(WORK_DIR, 'heavy', {
      startedAt: new Date(started).toISOString(),
      settings: { orders: options.heavyOrders, customers: CUSTOMERS, seconds: options.durationSeconds, heavyClients: HEAVY_CLIENTS, keyReadClients: KEY_READ_CLIENTS, poolSizePerTenant: poolSize, heavyRead: HEAVY_READ },
      environment: { node: process.version, cpus: cpus().length, postgres: await serverVersion(options.serverUrl) },
      phases,
    })
    log(`results saved to ${file}`)
    const starved = heavy.tenantA.unanswered + heavy.tenantB.unanswered
    return starved === 0 ? 0 : 1
  } finally {
    await server?.stop()
    closeHttpAgent()
    if (!options.keepDatabases) await dropRecordedDatabases(setup)
  }
}

/** `orders` orders spread over CUSTOMERS customers; returns one customer's Guid for the key reads. */
async function fillOrders(url: string, orders: number): Promise<string> {
  return withClient(url, async (client) => {
    await client.query(
      `insert into "Customer" ("Guid", "Name", "Title") select gen_random_uuid(), 'Customer ' || i, 'Customer ' || i from generate_series(1, $1) i`,
      [CUSTOMERS],
    )
    await client.query(
      `insert into "Order" ("Guid", "Number", "Customer_Guid", "Status", "Title")
       select gen_random_uuid(), i, c."Guid", 'Open', 'Order ' || i
         from generate_series(1, $1) i
         join (select "Guid", row_number() over (order by "Guid") - 1 as n from "Customer") c on c.n = i % $2`,
      [orders, CUSTOMERS],
    )
    await client.query('analyze')
    const { rows } = await client.query<{ guid: string }>(`select "Guid" as guid from "Customer" order by "Guid" limit 1`)
    return rows[0].guid
  })
}

async function signIn(origin: string, tenant: string, options: Options): Promise<string> {
  const body = JSON.stringify({ TenantId: tenant, Username: options.username, Password: options.password })
  const answer = await httpRequest(origin, 'POST', `${ENTITYCTL_API_ROOT}auth/signin`, {}, body)
  if (answer.status !== 200) throw new Error(`sign-in to ${tenant}: ${answer.status} ${answer.text.slice(0, 300)}`)
  return (JSON.parse(answer.text) as { accessToken: string }).accessToken
}

type Target = { tenant: string; path: string }

async function runPhase(origin: string, tokens: Map<string, string>, seconds: number, keyReads: Target[], heavy?: Target): Promise<Phase> {
  const deadline = Date.now() + seconds * 1000
  const heavyRun = heavy ? measure(origin, tokens, [heavy], HEAVY_CLIENTS, deadline) : undefined
  const [tenantA, tenantB] = await Promise.all(keyReads.map((target) => measure(origin, tokens, [target], KEY_READ_CLIENTS, deadline)))
  return { tenantA, tenantB, ...(heavyRun ? { heavy: await heavyRun } : {}) }
}

/**
 * `clients` clients, each on its own keep-alive socket, sending `targets` one after another
 * until `deadline` (0: once each). Latency of every request, by status.
 */
async function measure(origin: string, tokens: Map<string, string>, targets: Target[], clients: number, deadline: number): Promise<Latencies> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients })
  const times: number[] = []
  const statuses: Record<string, number> = {}
  let unanswered = 0
  const client = async () => {
    do {
      for (const target of targets) {
        const t0 = performance.now()
        let timer: NodeJS.Timeout | undefined
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('unanswered')), KEY_READ_TIMEOUT_MS)
        })
        try {
          const answer = await Promise.race([
            httpRequest(origin, 'GET', ENTITYCTL_API_ROOT + target.path, { authorization: `Bearer ${tokens.get(target.tenant)}` }, undefined, agent),
            timeout,
          ])
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
        } catch {
          unanswered++
        } finally {
          clearTimeout(timer)
        }
        times.push(performance.now() - t0)
      }
    } while (Date.now() < deadline)
  }
  try {
    await Promise.all(Array.from({ length: clients }, client))
  } finally {
    agent.destroy()
  }
  times.sort((x, y) => x - y)
  const at = (fraction: number) => Math.round((times[Math.min(times.length - 1, Math.ceil(fraction * times.length) - 1)] ?? 0) * 10) / 10
  return { reads: times.length, unanswered, statuses, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) }
}

function formatPhases(phases: { baseline: Phase; heavy: Phase }, poolSize: number, options: Options): string {
  const row = (label: string, l: Latencies) =>
    `| ${label} | ${l.reads} | ${l.p50Ms} | ${l.p99Ms} | ${l.maxMs} | ${l.unanswered} | ${JSON.stringify(l.statuses)} |`
  return [
    `Key reads (${KEY_READ_CLIENTS} clients per tenant), ${options.heavyOrders} orders per tenant, PoolSizePerTenant ${poolSize}, ${options.durationSeconds} s per phase`,
    '| | requests | p50 ms | p99 ms | max ms | unanswered | statuses |',
    '|---|---|---|---|---|---|---|',
    row('tenant A, baseline', phases.baseline.tenantA),
    row('tenant B, baseline', phases.baseline.tenantB),
    row(`tenant A, ${HEAVY_CLIENTS} heavy clients on A`, phases.heavy.tenantA),
    row(`tenant B, ${HEAVY_CLIENTS} heavy clients on A`, phases.heavy.tenantB),
    row('the heavy queries themselves', phases.heavy.heavy!),
  ].join('\n')
}
