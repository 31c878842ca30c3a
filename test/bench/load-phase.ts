// The load phase (WORKLOAD.md §5): reads query by query, the systems alternating which goes
// first; then writes system by system, W1 before W2. One system is loaded at a time, each after
// the cluster has gone quiet. Operations whose check failed are not load-tested.
import { machineCpu } from './machine-cpu.ts'
import { waitForQuietCluster } from './databases.ts'
import { loadTest } from './load-test.ts'
import type { LoadSettings, LoadTarget } from './load-test.ts'
import type { OperationResult } from './report.ts'
import type { System } from './systems.ts'
import type { ReadOperation, Workload, WriteOperation } from './workload.ts'
import { createOrderTarget, patchLineTarget, prepareLinesToPatch } from './write-requests.ts'
import type { OrderLedger } from './write-requests.ts'

/** Share of idle CPU the runner waits for (up to the quiet timeout) before measuring. */
const IDLE_ENOUGH = 0.8

export type LoadPhase = {
  systems: System[]
  workload: Workload
  results: Map<string, OperationResult>
  settings: LoadSettings
  serverUrl: string
  quietTimeoutMs: number
  ledger: OrderLedger
  /** Orders created before W2's load, whose lines it patches (--w2-orders). */
  w2Orders: number
  log: (line: string) => void
}

export async function runLoadPhase(phase: LoadPhase, reads: ReadOperation[], writes: WriteOperation[]): Promise<void> {
  for (const [i, operation] of reads.entries()) {
    const order = i % 2 === 0 ? phase.systems : [...phase.systems].reverse()
    for (const system of order) {
      await measure(phase, operation.id, system, {
        method: 'GET', path: system.root + operation.path, headers: system.headers,
      })
    }
  }
  for (const system of phase.systems) {
    for (const operation of writes) {
      if (!phase.results.get(operation.id)?.systems[system.name]?.check.ok) continue
      if (operation.id === 'W1') {
        await measure(phase, 'W1', system, () => createOrderTarget(system, phase.workload, phase.ledger))
      } else {
        const { lines, problems } = await prepareLinesToPatch(system, phase.workload, phase.ledger, phase.w2Orders)
        phase.results.get('W2')!.systems[system.name]!.notes.push(...problems)
        if (lines.length > 0) await measure(phase, 'W2', system, () => patchLineTarget(system, phase.workload, lines))
      }
    }
  }
}

/** `target` may be a function: a write's target is built after the sign-in, with its headers. */
async function measure(phase: LoadPhase, id: string, system: System, target: LoadTarget | (() => LoadTarget)) {
  const result = phase.results.get(id)?.systems[system.name]
  if (!result?.check.ok) return
  // A fresh token for each load: tokens are short-lived and a run takes minutes.
  await system.authenticate()
  const resolved = typeof target === 'function' ? target() : { ...target, headers: system.headers }
  result.quietCluster = await waitForQuietCluster(phase.serverUrl, phase.quietTimeoutMs)
  if (!result.quietCluster) result.notes.push('the cluster was still busy when the measurement started')
  result.cpuIdleBefore = await waitForIdleCpu(phase.quietTimeoutMs)
  if (result.cpuIdleBefore < IDLE_ENOUGH) {
    result.notes.push(`only ${Math.round(result.cpuIdleBefore * 100)}% CPU idle before measuring`)
  }
  result.load = await loadTest(system.origin, resolved, phase.settings)
  const { requestsPerSecond, p50Ms, p99Ms, errors, timeouts, non2xx } = result.load
  phase.log(`${id} ${system.name}: ${requestsPerSecond} req/s, p50 ${p50Ms} ms, p99 ${p99Ms} ms, ` +
    `errors ${errors + timeouts}, non-2xx ${non2xx} (CPU idle before: ${Math.round(result.cpuIdleBefore * 100)}%)`)
}

async function waitForIdleCpu(timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const idle = await cpuIdleShare(500)
    if (idle >= IDLE_ENOUGH || Date.now() > deadline) return idle
  }
}

/**
 * Share of CPU time idle over all cores during `ms`: other work on the machine (load average
 * would mostly show the previous measurement's own tail) skews the figure that follows.
 */
async function cpuIdleShare(ms: number): Promise<number> {
  const before = machineCpu()
  await new Promise((resolve) => setTimeout(resolve, ms))
  const after = machineCpu()
  return Math.round(((after.idleMs - before.idleMs) / Math.max(1, after.allMs - before.allMs)) * 100) / 100
}
