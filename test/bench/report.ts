// The run's results: the table printed at the end and the JSON file saved beside it
// (.work/results-<timestamp>.json), which holds everything the table shows plus the problems
// found by the checks, the statement texts and the status codes.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Check } from './check-answers.ts'
import type { LoadResult } from './load-test.ts'
import type { StatementSample } from './statement-count.ts'
import type { SystemName } from './systems.ts'

export type SystemResult = {
  check: Check
  statements: StatementSample | null
  load: LoadResult | null
  /** False when the cluster was still busy after the wait before measuring. */
  quietCluster: boolean | null
  /** Share of CPU idle just before the measurement (0..1): other work on the machine skews it. */
  cpuIdleBefore: number | null
  notes: string[]
}

export type OperationResult = {
  id: string
  name: string
  systems: Partial<Record<SystemName, SystemResult>>
  /** entityctl requests/s divided by the floor's. */
  ratio: number | null
  /** The stack floor's requests/s divided by the floor's, when it was measured (--stack-floor). */
  stackRatio?: number | null
}

export type RunResults = {
  startedAt: string
  finishedAt: string
  settings: Record<string, unknown>
  environment: Record<string, unknown>
  statementCounting: { method: string; description: string }
  timingsMs: Record<string, number>
  operations: OperationResult[]
}

/** `system`'s requests/s divided by the floor's. */
export function ratioOf(operation: OperationResult, system: Exclude<SystemName, 'floor'>): number | null {
  const floor = operation.systems.floor?.load?.requestsPerSecond
  const measured = operation.systems[system]?.load?.requestsPerSecond
  return floor && measured !== undefined ? Math.round((measured / floor) * 1000) / 1000 : null
}

const COLUMNS = ['op', 'system', 'check', 'req/s', 'p50 ms', 'p99 ms', 'err+to', 'non2xx', 'stmts/req', 'sql ms/req', '÷ floor']

export function formatTable(results: RunResults): string {
  const rows: string[][] = [COLUMNS]
  for (const operation of results.operations) {
    for (const [name, result] of Object.entries(operation.systems) as [SystemName, SystemResult][]) {
      const load = result.load
      rows.push([
        operation.id,
        name,
        checkLabel(result.check),
        load ? load.requestsPerSecond.toFixed(1) : '-',
        load ? load.p50Ms.toFixed(2) : '-',
        load ? load.p99Ms.toFixed(2) : '-',
        load ? String(load.errors + load.timeouts) : '-',
        load ? String(load.non2xx) : '-',
        result.statements ? result.statements.statements.toFixed(2) : 'n/a',
        result.statements ? result.statements.sqlMs.toFixed(3) : 'n/a',
        ratioCell(name === 'entityctl' ? operation.ratio : name === 'stack floor' ? operation.stackRatio : null),
      ])
    }
  }
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i].length)))
  const lines = rows.map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '))
  lines.splice(1, 0, widths.map((width) => '-'.repeat(width)).join('  '))
  return lines.join('\n')
}

function ratioCell(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? '' : ratio.toFixed(3)
}

/** The problems the checks found, one line each, under the table. */
export function formatProblems(results: RunResults): string {
  const lines: string[] = []
  for (const operation of results.operations) {
    for (const [name, result] of Object.entries(operation.systems) as [SystemName, SystemResult][]) {
      for (const problem of [...result.check.problems, ...result.notes]) lines.push(`${operation.id} ${name}: ${problem}`)
    }
  }
  return lines.join('\n')
}

function checkLabel(check: Check): string {
  if (!check.ok) return 'FAILED'
  return check.contentOk === false ? 'ok, content differs' : 'ok'
}

export function saveResults(results: RunResults, workDir: string): string {
  return saveRun(workDir, 'results', results)
}

/** Writes a run's JSON as `<kind>-<startedAt>.json` in `workDir`; returns the file's path. */
export function saveRun<Run extends { startedAt: string }>(workDir: string, kind: string, run: Run): string {
  const file = join(workDir, `${kind}-${run.startedAt.replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify(run, null, 2))
  return file
}

/** Progress lines of a run, stamped with the seconds since `started`: `[soak  12.3s] …`. */
export function progressLog(label: string, started: number): (line: string) => void {
  return (line) => console.log(`[${label} ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${line}`)
}
