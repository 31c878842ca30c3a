// `npm run bench -- --workflow`: what request n of one workflow costs (issue 16). One tenant of
// the demo model on one entityctl; --workflow-runs workflows (default 5), each of
// Workflow:MaxRequests (200) requests, each request a POST of an order with one line (deep
// insert: the rules compute the line's price and title and the order's total) with its reply,
// then the commit. Every request is timed at the client; the figure of request n is the median
// of requests n-2 … n+2 (clamped to 1 … 200) over all the workflows, 25 samples with the
// default 5 workflows (one sample per index is at the mercy of a busy machine); the commit's
// is the median over the workflows; and request 200 / request 1,
// which must stay at most 3 (a workflow rebuilds its state from stored write plans in one
// unit of work, not by replaying its requests: workflows/workflow-rebuild.ts).
// Results in .work/workflow-<timestamp>.json; the database is dropped unless --keep-databases.
import { cpus } from 'node:os'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { serverVersion } from './databases.ts'
import { ENTITYCTL_API_ROOT, signIn, startEntityctl } from './entityctl-process.ts'
import type { EntityctlSetup } from './entityctl-process.ts'
import { closeHttpAgent, httpRequest } from './http-request.ts'
import { REPO_ROOT, WORK_DIR } from './options.ts'
import type { Options } from './options.ts'
import { progressLog, saveRun } from './report.ts'
import { freePort } from './server-process.ts'
import type { ServerProcess } from './server-process.ts'
import { cloneTenants, dropRecordedDatabases } from './tenant-clones.ts'

const TENANT = 'benchflow'
const REQUESTS = 200
const REPORTED = [1, 50, 100, 200]
/** Requests around an index whose times make its figure. */
const WINDOW = 5
/** Request 200 may cost at most this many times request 1. */
const BOUND = 3

export async function runWorkflow(options: Options): Promise<number> {
  const started = Date.now()
  const log = progressLog('workflow', started)
  const workDir = join(WORK_DIR, 'workflow')
  mkdirSync(workDir, { recursive: true })
  rmSync(join(workDir, 'entityctl.log'), { force: true })
  const setup: EntityctlSetup = {
    repoRoot: REPO_ROOT, workDir, serverUrl: options.serverUrl, tenant: TENANT,
    username: options.username, password: options.password, poolSize: options.poolSizeGiven ? options.poolSize : undefined,
  }
  let server: ServerProcess | undefined
  try {
    await cloneTenants(setup, TENANT, 1)
    server = await startEntityctl({ ...setup, tenant: `${TENANT}-000` }, options.serverUrl, await freePort())
    const origin = server.origin
    const token = await signIn(origin, { ...setup, tenant: `${TENANT}-000` })
    const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const answer = await httpRequest(origin, method, `${ENTITYCTL_API_ROOT}${path}`, { authorization: `Bearer ${token}`, ...headers }, body === undefined ? undefined : JSON.stringify(body))
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`)
      return answer.text ? JSON.parse(answer.text) : undefined
    }
    const customer = (await send('POST', 'Customers', { Name: 'Workflow bench' })).Guid as string
    const product = (await send('POST', 'Products', { Code: 'WF-1', Name: 'Widget', Price: 2.5 })).Guid as string
    const runs: { requests: number[]; commit: number }[] = []
    for (let run = 0; run < options.workflowRuns; run++) {
      const { workflowId } = await send('POST', 'workflow')
      const requests: number[] = []
      for (let index = 1; index <= REQUESTS; index++) {
        const order = { Number: 2_000_000 + run * 1000 + index, 'Customer@odata.bind': `Customers(${customer})`, Lines: [{ 'Product@odata.bind': `Products(${product})`, Quantity: 1 }] }
        const t0 = performance.now()
        await send('POST', 'Orders?$select=Number,Total', order, { 'workflow-id': workflowId, 'workflow-index': String(index) })
        requests.push(performance.now() - t0)
      }
      const t0 = performance.now()
      await send('POST', 'workflow/commit', {}, { 'workflow-id': workflowId, 'workflow-index': String(REQUESTS + 1) })
      runs.push({ requests, commit: performance.now() - t0 })
      log(`workflow ${run + 1}: request 1 ${ms(requests[0])}, request ${REQUESTS} ${ms(requests[REQUESTS - 1])}, commit ${ms(runs.at(-1)!.commit)}`)
    }
    const around = (index: number) => runs.flatMap((r) => r.requests.slice(Math.max(0, Math.min(index - 3, REQUESTS - WINDOW)), Math.max(WINDOW, Math.min(index + 2, REQUESTS))))
    const figures = Object.fromEntries(REPORTED.map((index) => [index, median(around(index))]))
    const commit = median(runs.map((r) => r.commit))
    const ratio = figures[REQUESTS] / figures[1]
    console.log(`\n${formatFigures(figures, commit, ratio, options.workflowRuns)}\n`)
    const file = saveRun(WORK_DIR, 'workflow', {
      startedAt: new Date(started).toISOString(),
      settings: { requests: REQUESTS, workflows: options.workflowRuns, request: 'POST Orders?$select=Number,Total, one line (deep insert)' },
      environment: { node: process.version, cpus: cpus().length, postgres: await serverVersion(options.serverUrl) },
      medianMs: { ...figures, commit },
      ratio,
      runs,
    })
    log(`results saved to ${file}`)
    return ratio <= BOUND ? 0 : 1
  } finally {
    await server?.stop()
    closeHttpAgent()
    if (!options.keepDatabases) await dropRecordedDatabases(setup)
  }
}

function formatFigures(figures: Record<string, number>, commit: number, ratio: number, workflows: number): string {
  const rows = [...Object.entries(figures).map(([index, time]) => `| request ${index.padEnd(3)} | ${ms(time).padStart(9)} |`), `| commit      | ${ms(commit).padStart(9)} |`]
  return [
    `One workflow of ${REQUESTS} requests (POST of an order with one line), ${workflows} workflows; request n: median of requests n-2 … n+2 of all:`,
    '| request     | time      |',
    '|-------------|-----------|',
    ...rows,
    `request ${REQUESTS} / request 1 = ${ratio.toFixed(2)} (${ratio <= BOUND ? 'PASS' : 'FAIL'}: at most ${BOUND})`,
  ].join('\n')
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`
}
