// `npm run bench -- --soak [s]` (or `--soak-minutes m`): does entityctl stay up, flat and
// leak-free under a mixed and hostile load (issue 8: memory; issue #15: hostile requests)? One
// entityctl on the benchmark's dataset (tenant `soak`, so a comparison run's tenant is never
// touched) serves for s seconds (default 300) the workload's Q1, Q3, Q4 and W2 in turn on every
// autocannon connection, and beside them a few hostile clients (hostile-load.ts: fuzz requests,
// deep expands, bodies at the size limit, failed sign-ins, clients that disconnect mid-request).
// Checks, each PASS or FAIL, and the exit code 1 if one fails:
//   process     the same pid is alive at the end and answers a read
//   memory      RSS (from /proc every 5 s, memory-sampler.ts): its level (median) in the last
//               minute within 10% of its level in the minute after the first (fifths for shorter
//               runs); single samples and the highest are shown
//   connections PostgreSQL connections to the tenant database (pg_stat_activity) once idle after
//               the load equal those before it: the server runs with a short TenantIdleSeconds so
//               an idle tenant's pool closes, and a connection never given back stays counted
//   workload    no workload request failed
// Hostile answers are counted, not judged (the fuzz test judges them); 5xx answers and requests
// left unanswered are reported. Everything goes to .work/soak-<timestamp>.json; the tenant
// database is dropped unless --keep-databases.
import { cpus } from 'node:os'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { cleanAndVacuum, databaseUrl, dropDatabase, serverVersion, withClient } from './databases.ts'
import { sampleConnections } from './connection-sampler.ts'
import { ensureDataset } from './dataset.ts'
import { addPlainUser, prepareEntityctl, signIn, signingKeyOf } from './entityctl-process.ts'
import type { EntityctlSetup } from './entityctl-process.ts'
import { prepareHostileLoad } from './hostile-load.ts'
import type { HostileSummary } from './hostile-load.ts'
import { closeHttpAgent, httpRequest } from './http-request.ts'
import { loadDataset } from './load-dataset.ts'
import { loadMix } from './load-test.ts'
import type { LoadTarget } from './load-test.ts'
import { judgeMemory, sampleMemory } from './memory-sampler.ts'
import { REPO_ROOT, WORK_DIR } from './options.ts'
import { progressLog, saveRun } from './report.ts'
import type { Options } from './options.ts'
import { managedEntityctl } from './systems.ts'
import { readWorkload } from './workload.ts'
import { orderLedger, patchLineTarget, prepareLinesToPatch } from './write-requests.ts'

const READS = ['Q1', 'Q3', 'Q4']
const SAMPLE_EVERY_MS = 5_000
const LIMIT_PERCENT = 10
const SOAK_TENANT = 'soak'
/** Orders created before the load, whose lines W2 patches. */
const W2_ORDERS = 64
/** Hostile clients beside the workload's connections. */
const HOSTILE_CLIENTS = 4
/** The server's Database:TenantIdleSeconds: after the load its pool closes this soon. */
const TENANT_IDLE_SECONDS = 10
/** How long the idle server has to give its connections back. */
const IDLE_WAIT_MS = 90_000
const PLAIN_USER = { username: 'soak-plain', password: 'soak-plain-password-1' }
/** entityctl's ApiOptions:MaxBodyBytes (its default). */
const MAX_BODY_BYTES = 1_048_576

type Check = { name: string; value: string; pass: boolean }

/** Runs the soak; the exit code is 0 when every check passed. */
export async function runSoak(options: Options, seconds: number): Promise<number> {
  const started = Date.now()
  const log = progressLog('soak', started)
  const workDir = join(WORK_DIR, 'soak')
  mkdirSync(workDir, { recursive: true })
  rmSync(join(workDir, 'entityctl.log'), { force: true })
  const dataDir = join(WORK_DIR, 'data')
  log(`dataset ${await ensureDataset(options.workloadDir, dataDir)} in ${dataDir}`)
  const workload = await readWorkload(options.workloadDir, dataDir)
  const setup: EntityctlSetup = {
    repoRoot: REPO_ROOT, workDir, serverUrl: options.serverUrl, tenant: SOAK_TENANT,
    username: options.username, password: options.password, poolSize: options.poolSize, maxConnections: options.maxConnections,
    tenantIdleSeconds: TENANT_IDLE_SECONDS,
  }
  const database = await prepareEntityctl(setup)
  await addPlainUser(setup, PLAIN_USER.username, PLAIN_USER.password)
  const system = managedEntityctl(setup, database)
  try {
    const url = databaseUrl(options.serverUrl, database)
    log(`entityctl database ${database}: loaded ${JSON.stringify(await loadDataset(url, dataDir))}`)
    await cleanAndVacuum(url, workload.firstWriteNumber)
    await system.start((connectionString) => connectionString)
    const pid = system.pid!
    // Before any request: the connections the server holds whatever it serves.
    const connectionsBefore = await connectionsTo(options.serverUrl, database)
    await system.authenticate()
    const targets: LoadTarget[] = []
    for (const id of READS) {
      const operation = workload.reads.find((read) => read.id === id)!
      const answer = await httpRequest(system.origin, 'GET', system.root + operation.path, system.headers)
      if (answer.status !== 200) throw new Error(`${id}: status ${answer.status} before the soak: ${answer.text.slice(0, 300)}`)
      targets.push({ method: 'GET', path: system.root + operation.path, headers: system.headers })
    }
    const { lines, problems } = await prepareLinesToPatch(system, workload, orderLedger(workload.firstWriteNumber), W2_ORDERS)
    if (lines.length === 0) throw new Error(`W2: no lines to patch: ${problems.join('; ')}`)
    targets.push(patchLineTarget(system, workload, lines))
    const keys = await hostileRows(system.origin, system.headers.authorization)
    const plainToken = await signIn(system.origin, setup, PLAIN_USER.username, PLAIN_USER.password)

    const hostileLoad = await prepareHostileLoad({
      origin: system.origin, keys, tenant: SOAK_TENANT, username: options.username, admin: system.headers.authorization,
      restricted: `Bearer ${plainToken}`, maxBodyBytes: MAX_BODY_BYTES,
      jwt: { signingKey: signingKeyOf(setup), issuer: 'entityctl', audience: 'entityctl-api' },
    })

    log(`soak: ${seconds} s of ${[...READS, 'W2'].join(', ')} in turn on ${options.connections} connections and ${HOSTILE_CLIENTS} hostile clients; ` +
      `RSS of pid ${pid} every ${SAMPLE_EVERY_MS / 1000} s; ${connectionsBefore} connections to ${database} before`)
    const sampler = sampleMemory(pid, SAMPLE_EVERY_MS)
    const connectionSampler = await sampleConnections(options.serverUrl, [database], 1_000)
    const progress = setInterval(() => log(`RSS ${sampler.latest()?.rssMb ?? '?'} MB, ${connectionSampler.latest()?.total ?? '?'} connections`), 60_000)
    const stopAt = Date.now() + seconds * 1000
    const [load, hostile] = await Promise.all([
      loadMix(system.origin, targets, options.connections, seconds),
      hostileLoad(HOSTILE_CLIENTS, stopAt),
    ]).finally(() => clearInterval(progress))
    const samples = sampler.stop()
    const connectionSamples = await connectionSampler.stop()
    const verdict = judgeMemory(samples, seconds, LIMIT_PERCENT)
    const failed = load.errors + load.timeouts + load.non2xx
    log(`load: ${load.requests} requests, ${load.requestsPerSecond} req/s, p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms, ` +
      `errors ${load.errors + load.timeouts}, non-2xx ${load.non2xx} ${JSON.stringify(load.statusCodes)}`)
    log(`hostile: ${hostile.requests} requests ${JSON.stringify(hostile.counts)}`)
    for (const example of hostile.examples) log(`  ${example}`)

    log(`waiting up to ${IDLE_WAIT_MS / 1000} s for the idle server to give its connections back`)
    const idle = await waitForConnections(options.serverUrl, database, connectionsBefore, IDLE_WAIT_MS)
    const probe = await httpRequest(system.origin, 'GET', targets[0].path!, system.headers).catch((error: Error) => ({ status: 0, text: error.message }))
    const alive = isRunning(pid)
    const peak = Math.max(...connectionSamples.map((sample) => sample.total))
    const checks: Check[] = [
      { name: 'process', value: `pid ${pid} ${alive ? 'alive' : 'GONE'}, Q1 after the soak: ${probe.status}`, pass: alive && probe.status === 200 },
      {
        name: 'memory',
        value: `RSS level (median of ${verdict.referenceSeconds.toFixed(0)} s windows) ${verdict.referenceLevelMb} MB after the first, ${verdict.finalLevelMb} MB in the last ` +
          `(${signed(verdict.levelGrowthPercent)}%, limit +${LIMIT_PERCENT}%); samples: ${verdict.referenceMb} MB at ${verdict.referenceSeconds} s, ` +
          `${verdict.finalMb} MB at the end (${signed(verdict.finalGrowthPercent)}%), highest ${verdict.maxLaterMb} MB (${signed(verdict.maxGrowthPercent)}%)`,
        pass: verdict.levelPass,
      },
      {
        name: 'connections',
        value: `${connectionsBefore} before, at most ${peak} under load, ${idle.count} once idle (${idle.afterMs === undefined ? `not back after ${IDLE_WAIT_MS / 1000} s` : `after ${(idle.afterMs / 1000).toFixed(0)} s`})`,
        pass: idle.count === connectionsBefore,
      },
      { name: 'workload', value: `${load.requests} requests (${load.requestsPerSecond}/s, p99 ${load.p99Ms} ms), ${failed} failed`, pass: failed === 0 },
    ]
    const unhandled = countUnhandled(join(workDir, 'entityctl.log'))
    console.log(`\n${formatChecks(checks)}\n  hostile      ${describeHostile(hostile)}; ${unhandled} "unhandled error" lines in the log (not judged)\n`)
    const pass = checks.every((check) => check.pass)
    const file = saveRun(WORK_DIR, 'soak', {
      startedAt: new Date(started).toISOString(),
      settings: { seconds, connections: options.connections, hostileClients: HOSTILE_CLIENTS, operations: [...READS, 'W2'], poolSize: options.poolSize, sampleEveryMs: SAMPLE_EVERY_MS, tenantIdleSeconds: TENANT_IDLE_SECONDS },
      environment: { node: process.version, cpus: cpus().length, postgres: await serverVersion(options.serverUrl) },
      pass, checks, verdict, load, hostile, unhandledErrorLines: unhandled, connections: { before: connectionsBefore, idle, samples: connectionSamples }, samples,
    })
    log(`${pass ? 'PASS' : 'FAIL'}; results saved to ${file}`)
    return pass ? 0 : 1
  } finally {
    await system.stop()
    closeHttpAgent()
    if (!options.keepDatabases) await dropDatabase(options.serverUrl, database)
  }
}

const signed = (value: number) => (value >= 0 ? `+${value}` : String(value))

/** Rows of the hostile share's own, so its writes and deletes never touch what the workload uses. */
async function hostileRows(origin: string, authorization: string) {
  const headers = { authorization }
  const created = async (path: string, body: unknown) => {
    const answer = await httpRequest(origin, 'POST', `/api/${path}`, headers, JSON.stringify(body))
    if (answer.status !== 200) throw new Error(`POST ${path} before the soak: ${answer.status} ${answer.text.slice(0, 300)}`)
    return JSON.parse(answer.text) as { Guid: string; Lines?: { Guid: string }[] }
  }
  const customer = (await created('Customers', { Name: 'Soak hostile', Country: 'DE' })).Guid
  const product = (await created('Products', { Code: `SOAK-${Date.now() % 1e9}`, Name: 'Soak hostile', Price: 1, Category: 'SoakHostile' })).Guid
  const order = await created('Orders?$expand=Lines', {
    Number: 2_000_000_000 + (Date.now() % 100_000_000), 'Customer@odata.bind': `Customers(${customer})`,
    Lines: [{ Quantity: 1, 'Product@odata.bind': `Products(${product})` }],
  })
  return { customer, product, order: order.Guid, line: order.Lines![0].Guid }
}

function connectionsTo(serverUrl: string, database: string): Promise<number> {
  return withClient(serverUrl, async (client) =>
    Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [database])).rows[0].n))
}

/** Polls until the count is back to `expected` (twice in a row) or the time is up. */
async function waitForConnections(serverUrl: string, database: string, expected: number, timeoutMs: number) {
  const started = Date.now()
  let count = await connectionsTo(serverUrl, database)
  let matches = 0
  while (Date.now() - started < timeoutMs) {
    matches = count === expected ? matches + 1 : 0
    if (matches >= 2) return { count, afterMs: Date.now() - started }
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    count = await connectionsTo(serverUrl, database)
  }
  return { count, afterMs: undefined }
}

function isRunning(pid: number): boolean {
  try {
    // A zombie (exited, not yet reaped) has a stat file too: its state is Z.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

function countUnhandled(logFile: string): number {
  if (!existsSync(logFile)) return 0
  return readFileSync(logFile, 'utf8').split('\n').filter((line) => line.includes('"unhandled error"')).length
}

function formatChecks(checks: Check[]): string {
  return checks.map((check) => `  ${check.name.padEnd(12)} ${check.pass ? 'PASS' : 'FAIL'}  ${check.value}`).join('\n')
}

function describeHostile(hostile: HostileSummary): string {
  const totals: Record<string, number> = {}
  for (const outcomes of Object.values(hostile.counts)) for (const [outcome, n] of Object.entries(outcomes)) totals[outcome] = (totals[outcome] ?? 0) + n
  return `${hostile.requests} requests: ${Object.entries(totals).map(([outcome, n]) => `${outcome} ${n}`).join(', ')}`
}
