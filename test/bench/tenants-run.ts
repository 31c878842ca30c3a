// `npm run bench -- --tenants <n>`: do n tenants, all receiving requests, stay within the
// PostgreSQL connections entityctl is configured for, and fast (issues 8, 20)? n tenants
// (tenant-clones.ts) on one entityctl; --connections clients share them round robin, signing
// in and sending key reads for --duration seconds (tenant-clients.ts) while the connections
// to their databases are sampled every 250 ms (connection-sampler.ts), the connections opened
// while measured are counted (pg_stat_database.sessions), and the server's RSS every second. PASS: the tenant connections stay within Database:MaxConnections less the
// instance's one notification connection, every request succeeds, key-read p95 < 50 ms and
// sign-in p95 < 300 ms. Results in .work/tenants-<timestamp>.json; the databases are dropped
// unless --keep-databases.
import { cpus } from 'node:os'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { SECTIONS } from '../../server/config/schema.ts'
import { maxConnectionsOf, sampleConnections, sessionsOf } from './connection-sampler.ts'
import { busyMsBetween, machineCpu } from './machine-cpu.ts'
import { sampleMemory } from './memory-sampler.ts'
import { serverVersion } from './databases.ts'
import { startEntityctl } from './entityctl-process.ts'
import type { EntityctlSetup } from './entityctl-process.ts'
import { closeHttpAgent } from './http-request.ts'
import { REPO_ROOT, WORK_DIR } from './options.ts'
import { progressLog, saveRun } from './report.ts'
import type { Options } from './options.ts'
import { freePort } from './server-process.ts'
import type { ServerProcess } from './server-process.ts'
import { TENANT_READ, runTenantClients } from './tenant-clients.ts'
import { cloneTenants, dropRecordedDatabases } from './tenant-clones.ts'

/** The tenants' names without --tenant: benchtenant-000 … */
const TENANT_PREFIX = 'benchtenant'
const SAMPLE_EVERY_MS = 250

/** Runs the measurement; the exit code is 0 when the bound held and every request succeeded. */
export async function runTenants(options: Options, count: number): Promise<number> {
  const started = Date.now()
  const log = progressLog('tenants', started)
  // --tenant names this run's tenants and databases, so runs on one database server (from
  // several checkouts) never drop each other's: each drops only what its own work folder recorded.
  const prefix = options.tenantGiven ? options.tenant : TENANT_PREFIX
  const workDir = join(WORK_DIR, 'tenants')
  mkdirSync(workDir, { recursive: true })
  rmSync(join(workDir, 'entityctl.log'), { force: true })
  const setup: EntityctlSetup = {
    repoRoot: REPO_ROOT, workDir, serverUrl: options.serverUrl, tenant: prefix,
    username: options.username, password: options.password,
    poolSize: options.poolSizeGiven ? options.poolSize : undefined, maxConnections: options.maxConnections,
  }
  const bound = options.maxConnections ?? SECTIONS.Database.MaxConnections.default
  const poolSize = setup.poolSize ?? SECTIONS.Database.PoolSizePerTenant.default
  let server: ServerProcess | undefined
  try {
    const tenants = await cloneTenants(setup, prefix, count)
    log(`${count} tenants: ${tenants.databases[0]} and ${count - 1} copies`)
    // The start migrates every tenant, one after another.
    server = await startEntityctl(setup, options.serverUrl, await freePort(), 60_000 + count * 2_000)
    log(`entityctl serving ${count} tenants (MaxConnections ${bound}, PoolSizePerTenant ${poolSize}); ` +
      `${options.connections} clients share the tenants round robin: ${TENANT_READ}, a sign-in every 20th turn, for ${options.durationSeconds} s`)
    const sampler = await sampleConnections(options.serverUrl, tenants.databases, SAMPLE_EVERY_MS)
    const memory = sampleMemory(server.pid, 1_000)
    const progress = setInterval(() => log(`connections ${JSON.stringify(sampler.latest())}`), 10_000)
    let sessionsBefore = 0
    let cpuBefore = machineCpu()
    const clients = await runTenantClients(server.origin, tenants.names, options, options.durationSeconds, async () => {
      sessionsBefore = await sessionsOf(options.serverUrl, tenants.databases)
      cpuBefore = machineCpu()
    }).finally(() => clearInterval(progress))
    const cpuAfter = machineCpu()
    const requests = Math.max(1, clients.reads + clients.signIns)
    // Each is a backend started (and another tenant's ended to make room): the cost of a turn
    // whose tenant had no connection left.
    const opened = (await sessionsOf(options.serverUrl, tenants.databases)) - sessionsBefore
    const samples = await sampler.stop()
    const rss = memory.stop()
    const max = (pick: (sample: (typeof samples)[number]) => number) => Math.max(...samples.map(pick))
    // The instance's one notification connection (auth/access-listener.ts) is outside the tenant databases.
    const tenantBound = bound - 1
    const connections = {
      bound, tenantBound, poolSize, maxTotal: max((s) => s.total),
      maxCluster: max((s) => s.cluster), clusterMaxConnections: await maxConnectionsOf(options.serverUrl),
      opened, openedPerRequest: Math.round((opened / requests) * 100) / 100,
    }
    const rssBeforeMb = rss[0]?.rssMb ?? NaN
    const rssPeakMb = Math.max(...rss.map((sample) => sample.rssMb))
    const rssPerTenantKb = Math.round(((rssPeakMb - rssBeforeMb) * 1024) / count)
    // The clients send their next request as soon as the last is answered: with the CPUs busy,
    // the mean latency is the clients over the throughput (Little's law), whatever the server.
    const busyMs = busyMsBetween(cpuBefore, cpuAfter)
    const machine = {
      busyShare: Math.round((busyMs / Math.max(1, cpuAfter.allMs - cpuBefore.allMs)) * 100) / 100,
      cpuMsPerRequest: Math.round((busyMs / requests) * 100) / 100,
      meanLatencyMs: Math.round(((options.connections * options.durationSeconds * 1000) / requests) * 10) / 10,
    }
    const targets = clients.keyRead.p95Ms < 50 && clients.signIn.p95Ms < 300
    const pass = connections.maxTotal <= tenantBound && clients.failed === 0 && clients.tenantsWithoutRead.length === 0 && targets
    log(`${clients.signIns} sign-ins, ${clients.reads} reads: ${JSON.stringify(clients.statusCodes)}`)
    for (const failure of clients.failures) log(`failure: ${failure}`)
    const row = (name: string, p: typeof clients.keyRead, target: string) => `| ${name} | ${p.p50Ms} | ${p.p95Ms} | ${p.p99Ms} | ${p.maxMs} | ${target} |`
    console.log([
      '',
      `${count} tenants, ${options.connections} clients, ${options.durationSeconds} s, MaxConnections ${bound}, PoolSizePerTenant ${poolSize}:`,
      '',
      '| request | p50 ms | p95 ms | p99 ms | max ms | target (p95) |',
      '|---|---|---|---|---|---|',
      row(`key read (${clients.reads} reads)`, clients.keyRead, '< 50 ms'),
      row(`sign-in (${clients.signIns})`.replace(')', ' sign-ins)'), clients.signIn, '< 300 ms'),
      '',
      `tenant connections at most ${connections.maxTotal} of ${tenantBound} (MaxConnections ${bound} less the notification ` +
        `connection), ${opened} opened while measured (${connections.openedPerRequest} per request); cluster at most ${connections.maxCluster} of max_connections ${connections.clusterMaxConnections}; ` +
        `RSS ${rssBeforeMb} MB before, ${rssPeakMb} MB at most with ${count} tenants open: ${rssPerTenantKb} KB per open tenant; ` +
        `${clients.failed} requests failed, ${clients.tenantsWithoutRead.length} tenants without a read: ${pass ? 'PASS' : 'FAIL'}`,
      '',
      `The machine's CPUs were ${Math.round(machine.busyShare * 100)}% busy while measured: ${machine.cpuMsPerRequest} ms of CPU a request, ` +
        `and ${options.connections} clients over ${Math.round(requests / options.durationSeconds)} requests a second wait ${machine.meanLatencyMs} ms on average ` +
        `(README, "Many busy tenants": the targets allow about 40).`,
      '',
    ].join('\n'))
    const file = saveRun(WORK_DIR, 'tenants', {
      startedAt: new Date(started).toISOString(),
      settings: { tenants: count, seconds: options.durationSeconds, read: TENANT_READ, maxConnections: bound, poolSizePerTenant: poolSize },
      environment: { node: process.version, cpus: cpus().length, postgres: await serverVersion(options.serverUrl) },
      pass, connections, machine, clients, samples, rss,
    })
    log(`results saved to ${file}`)
    return pass ? 0 : 1
  } finally {
    await server?.stop()
    closeHttpAgent()
    if (!options.keepDatabases) await dropRecordedDatabases(setup)
  }
}
