// `npm run bench -- --soak [s]`: does entityctl's memory stay flat under load (issue 8: no
// growth beyond the first minute's level by more than 10%)? One entityctl on the benchmark's
// dataset (tenant `soak`, so a comparison run's tenant is never touched) serves a mixed load for
// s seconds (default 300): every autocannon connection sends Q1, Q3, Q4 and W2 in turn. The
// server's RSS is read from /proc every 5 s (memory-sampler.ts); the verdict compares every
// later sample with the one at the end of minute 1. Samples, verdict and load figures go to
// .work/soak-<timestamp>.json; the tenant database is dropped unless --keep-databases.
import { cpus } from 'node:os'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { cleanAndVacuum, databaseUrl, dropDatabase, serverVersion } from './databases.ts'
import { ensureDataset } from './dataset.ts'
import { prepareEntityctl } from './entityctl-process.ts'
import type { EntityctlSetup } from './entityctl-process.ts'
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

/** Runs the soak; the exit code is 0 when memory stayed flat and every request succeeded. */
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
  }
  const database = await prepareEntityctl(setup)
  const system = managedEntityctl(setup, database)
  try {
    const url = databaseUrl(options.serverUrl, database)
    log(`entityctl database ${database}: loaded ${JSON.stringify(await loadDataset(url, dataDir))}`)
    await cleanAndVacuum(url, workload.firstWriteNumber)
    await system.start((connectionString) => connectionString)
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

    log(`soak: ${seconds} s of ${[...READS, 'W2'].join(', ')} in turn on ${options.connections} connections; RSS of pid ${system.pid} every ${SAMPLE_EVERY_MS / 1000} s`)
    const sampler = sampleMemory(system.pid!, SAMPLE_EVERY_MS)
    const progress = setInterval(() => log(`RSS ${sampler.latest()?.rssMb ?? '?'} MB`), 60_000)
    const load = await loadMix(system.origin, targets, options.connections, seconds).finally(() => clearInterval(progress))
    const samples = sampler.stop()
    const verdict = judgeMemory(samples, seconds, LIMIT_PERCENT)
    const failed = load.errors + load.timeouts + load.non2xx
    log(`load: ${load.requests} requests, ${load.requestsPerSecond} req/s, p50 ${load.p50Ms} ms, p99 ${load.p99Ms} ms, ` +
      `errors ${load.errors + load.timeouts}, non-2xx ${load.non2xx} ${JSON.stringify(load.statusCodes)}`)
    console.log(`\nRSS at ${verdict.referenceSeconds} s: ${verdict.referenceMb} MB; later max ${verdict.maxLaterMb} MB ` +
      `(${signed(verdict.maxGrowthPercent)}%), final ${verdict.finalMb} MB (${signed(verdict.finalGrowthPercent)}%): ` +
      `${verdict.pass ? 'PASS' : 'FAIL'} (limit +${verdict.limitPercent}%)${failed ? `; ${failed} requests FAILED` : ''}\n`)
    const file = saveRun(WORK_DIR, 'soak', {
      startedAt: new Date(started).toISOString(),
      settings: { seconds, connections: options.connections, operations: [...READS, 'W2'], poolSize: options.poolSize, sampleEveryMs: SAMPLE_EVERY_MS },
      environment: { node: process.version, cpus: cpus().length, postgres: await serverVersion(options.serverUrl) },
      verdict, load, samples,
    })
    log(`results saved to ${file}`)
    return verdict.pass && failed === 0 ? 0 : 1
  } finally {
    await system.stop()
    closeHttpAgent()
    if (!options.keepDatabases) await dropDatabase(options.serverUrl, database)
  }
}

const signed = (value: number) => (value >= 0 ? `+${value}` : String(value))
