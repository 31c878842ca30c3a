// `npm run bench`: measures entityctl against the floor, a hand-written server that is the
// physical limit of the same workload on the same PostgreSQL (README.md beside this file).
//   1. dataset (generated once) → floor database and entityctl tenant database
//   2. checking phase: each answer against expected.json, SQL statements per request counted
//   3. load phase: autocannon per operation and system, one system at a time
//   4. table on stdout, JSON in .work/results-<timestamp>.json; databases dropped
import { cpus } from 'node:os'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { checkSystem } from './check-phase.ts'
import { applySqlFile, cleanAndVacuum, databaseUrl, dropDatabase, recreateDatabase, serverVersion } from './databases.ts'
import { datasetDir, ensureDataset } from './dataset.ts'
import { prepareEntityctl } from './entityctl-process.ts'
import type { EntityctlSetup } from './entityctl-process.ts'
import { closeHttpAgent } from './http-request.ts'
import { loadDataset } from './load-dataset.ts'
import { runLoadPhase } from './load-phase.ts'
import { BENCH_DIR, REPO_ROOT, WORK_DIR, parseOptions } from './options.ts'
import type { Options } from './options.ts'
import { formatProblems, formatTable, progressLog, ratioOf, saveResults } from './report.ts'
import type { OperationResult, RunResults } from './report.ts'
import { openStatementCounter } from './statement-count.ts'
import { externalEntityctl, floorSystem, managedEntityctl } from './systems.ts'
import type { System } from './systems.ts'
import { readWorkload } from './workload.ts'
import { deleteOrders, orderLedger } from './write-requests.ts'


const options = parseOptions(process.argv.slice(2))
// Ctrl-C: exit; the child servers are killed on exit and the next run recreates the databases.
process.on('SIGINT', () => process.exit(130))
// The other measurements of entityctl alone (README.md beside this file).
if (options.soakSeconds !== undefined) process.exit(await (await import('./soak.ts')).runSoak(options, options.soakSeconds))
if (options.tenants !== undefined) process.exit(await (await import('./tenants-run.ts')).runTenants(options, options.tenants))
if (options.heavy) process.exit(await (await import('./heavy-run.ts')).runHeavy(options))
if (options.workflow) process.exit(await (await import('./workflow-run.ts')).runWorkflow(options))
const started = Date.now()
const log = progressLog('bench', started)
const timings: Record<string, number> = {}
const timed = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
  const t0 = Date.now()
  try {
    return await step()
  } finally {
    timings[name] = Date.now() - t0
  }
}

mkdirSync(WORK_DIR, { recursive: true })
for (const log of ['floor.log', 'entityctl.log']) rmSync(join(WORK_DIR, log), { force: true })
const dataDir = datasetDir(options.scale)
log(`dataset ${await timed('dataset', () => ensureDataset(options.workloadDir, dataDir, options.scale))} in ${dataDir}`)
const workload = await readWorkload(options.workloadDir, dataDir)
const only = options.only
const reads = workload.reads.filter((operation) => !only || only.includes(operation.id))
const writes = workload.writes.filter((operation) => !only || only.includes(operation.id))
if (reads.length + writes.length === 0) throw new Error(`--only ${only?.join(',')}: no such operation`)

const counter = await openStatementCounter(options.serverUrl)
log(`statement counting: ${counter.description}`)
const systems: System[] = []
const dropAtEnd: string[] = []
const ledger = orderLedger(workload.firstWriteNumber)
const results = new Map<string, OperationResult>(
  [...reads, ...writes].map((operation) => [operation.id, { id: operation.id, name: operation.name, systems: {}, ratio: null }]),
)

try {
  // The two databases are loaded side by side (two COPYs of the whole dataset, two databases):
  // nothing is measured yet. Both settle before a failure is thrown, so the drops below find
  // whatever either made.
  const prepared = await Promise.allSettled([
    timed('floorDatabase', () => prepareFloor(options)),
    ...(options.floorOnly ? [] : [timed('entityctlDatabase', () => prepareEntityctlSystem(options))]),
  ])
  for (const result of prepared) {
    if (result.status === 'rejected') throw result.reason
    systems.push(...result.value)
  }
  for (const system of systems) {
    if (system.database) await cleanAndVacuum(databaseUrl(options.serverUrl, system.database), workload.firstWriteNumber)
  }

  log('checking answers and counting statements')
  await timed('checks', async () => {
    for (const system of systems) {
      await system.start(counter.routeThrough)
      const checks = await checkSystem(system, workload, [...reads, ...writes], counter, options.countedRequests, ledger)
      for (const [id, { check, statements }] of checks) {
        results.get(id)!.systems[system.name] = { check, statements, load: null, quietCluster: null, cpuIdleBefore: null, notes: [] }
        log(`${id} ${system.name}: ${check.ok ? (check.contentOk === false ? 'ok, content differs' : 'ok') : 'FAILED'}` +
          `${statements ? `, ${statements.statements.toFixed(2)} statements/request` : ''}`)
      }
      // Load tests must not pay for the counting proxy: restart on a direct connection.
      if (counter.needsRestart) {
        await system.stop()
        await system.start((url) => url)
      }
    }
  })

  log(`load: ${options.connections} connections, ${options.warmupSeconds} s warm-up, ${options.durationSeconds} s measured`)
  await timed('load', () =>
    runLoadPhase({
      systems, workload, results, ledger, log, serverUrl: options.serverUrl, quietTimeoutMs: options.quietTimeoutMs, w2Orders: options.w2Orders,
      settings: { connections: options.connections, warmupSeconds: options.warmupSeconds, durationSeconds: options.durationSeconds },
    }, reads, writes))

  await timed('cleanup', () => cleanUp(systems))
  const report = await runResults()
  console.log(`\n${formatTable(report)}\n`)
  const problems = formatProblems(report)
  if (problems) console.log(`${problems}\n`)
  log(`results saved to ${saveResults(report, WORK_DIR)}`)
} finally {
  for (const system of systems) await system.stop()
  await counter.close()
  closeHttpAgent()
  if (!options.keepDatabases) for (const database of dropAtEnd) await dropDatabase(options.serverUrl, database)
}

/** The floor, and the stack floor on the same database when asked for (the ledger keeps their orders apart). */
async function prepareFloor(options: Options): Promise<System[]> {
  // Named after the tenant, so runs with other tenants (the test suite's smoke) never share it.
  const floorDatabase = `${options.tenant}_floor`
  const url = databaseUrl(options.serverUrl, floorDatabase)
  await recreateDatabase(options.serverUrl, floorDatabase)
  dropAtEnd.push(floorDatabase)
  await applySqlFile(url, join(BENCH_DIR, 'schema.sql'))
  log(`floor database ${floorDatabase}: loaded ${JSON.stringify(await loadDataset(url, dataDir))}`)
  const floor = floorSystem(options.serverUrl, floorDatabase, options.poolSize)
  return options.stackFloor ? [floor, floorSystem(options.serverUrl, floorDatabase, options.poolSize, 'koa')] : [floor]
}

async function prepareEntityctlSystem(options: Options): Promise<System[]> {
  // A smoke run (the test suite's) keeps its configuration and tenant record apart, so it never
  // drops the databases a benchmark run kept (--keep-databases) for write-cpu.ts and the like.
  const workDir = options.smoke ? join(WORK_DIR, 'smoke') : WORK_DIR
  mkdirSync(workDir, { recursive: true })
  const setup: EntityctlSetup = {
    repoRoot: REPO_ROOT, workDir, serverUrl: options.serverUrl,
    tenant: options.tenant, username: options.username, password: options.password, poolSize: options.poolSize,
    pluginsDir: options.pluginsDir,
  }
  if (options.entityctlUrl) {
    const database = options.entityctlDatabase
    if (database) log(`entityctl database ${database}: loaded ${JSON.stringify(await loadDataset(databaseUrl(options.serverUrl, database), dataDir))}`)
    // Its connections cannot be routed through a proxy: only pg_stat_statements can count them.
    return [externalEntityctl(setup, options.entityctlUrl, database, counter.method === 'pg_stat_statements')]
  }
  const database = await prepareEntityctl(setup)
  dropAtEnd.push(database)
  log(`entityctl database ${database}: loaded ${JSON.stringify(await loadDataset(databaseUrl(options.serverUrl, database), dataDir))}`)
  return [managedEntityctl(setup, database)]
}

/** Removes the orders the writes created: by SQL where the database is known, else through the API. */
async function cleanUp(systems: System[]): Promise<void> {
  for (const system of systems) {
    if (system.database) await cleanAndVacuum(databaseUrl(options.serverUrl, system.database), workload.firstWriteNumber)
    else {
      await system.authenticate()
      await deleteOrders(system, workload, ledger.created.get(system) ?? [])
    }
  }
}

async function runResults(): Promise<RunResults> {
  const operations = [...results.values()]
  for (const operation of operations) {
    operation.ratio = ratioOf(operation, 'entityctl')
    operation.stackRatio = ratioOf(operation, 'stack floor')
  }
  return {
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date().toISOString(),
    settings: {
      smoke: options.smoke, connections: options.connections, warmupSeconds: options.warmupSeconds,
      durationSeconds: options.durationSeconds, poolSize: options.poolSize, countedRequests: options.countedRequests,
      systems: systems.map((system) => system.name), entityctlUrl: options.entityctlUrl ?? null,
    },
    environment: {
      node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model, postgres: await serverVersion(options.serverUrl),
    },
    statementCounting: { method: counter.method, description: counter.description },
    timingsMs: timings,
    operations,
  }
}
