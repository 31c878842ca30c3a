// `npm run bench -- --smoke --stack-floor` from the test suite: the whole benchmark chain
// (dataset, both databases, the floor, the stack floor and a real entityctl, answer checks,
// statement counting, a second of load each) must work, every answer must match the expected results, and the statement
// targets of the performance issue must hold: one per read, at most four per write. Speed is
// not judged here (this machine is shared and the other test files run beside it); the ratios
// are for `npm run bench`. It runs on the benchmark's own plugin (test/bench/plugin, the demo
// with the workload's indexes), the runner's default.

import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { TEST_DATABASE_URL } from '../support/test-server.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
// Its own tenant (so its own databases, entityctl_smoke_… and smoke_…_floor): a benchmark run
// with --keep-databases, or one running beside the tests, keeps its databases.
const SMOKE_TENANT = `smoke_${randomBytes(4).toString('hex')}`

interface SystemResult {
  readonly check: { readonly ok: boolean; readonly problems: readonly string[] }
  readonly statements: { readonly statements: number }
  readonly load: { readonly errors: number; readonly timeouts: number; readonly non2xx: number } | null
}

it('runs every operation on the floor, the stack floor and entityctl with the right answers and statement counts', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    // The statement targets are the shapes'. A heavy read planned for its values (after three
    // runs over 30 ms each, which a machine busy with the other test files can make of any read)
    // runs in a transaction of its own, two statements more: test/persistence/plan-choice.test.ts.
    const env = { ...process.env, Database__PlanForValuesAfterMs: '0' }
    execFile(process.execPath, ['test/bench/run.ts', '--smoke', '--stack-floor', '--database-url', TEST_DATABASE_URL, '--tenant', SMOKE_TENANT], { cwd: root, env, maxBuffer: 16 << 20 }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout: out, stderr: err }),
    )
  })
  expect(code, `${stdout}\n${stderr}`).toBe(0)
  const saved = /results saved to (\S+\.json)/.exec(stdout)?.[1]
  expect(saved, stdout).toBeDefined()
  const report = JSON.parse(readFileSync(saved!, 'utf8')) as { operations: { id: string; systems: Record<string, SystemResult> }[] }
  expect(report.operations.map((o) => o.id)).toEqual(['Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6', 'Q7', 'W1', 'W2'])
  for (const { id, systems } of report.operations) {
    for (const name of ['floor', 'stack floor', 'entityctl']) {
      const result = systems[name]
      expect(result.check, `${id} ${name}`).toEqual(expect.objectContaining({ ok: true, problems: [] }))
      expect(result.load, `${id} ${name}`).toEqual(expect.objectContaining({ errors: 0, timeouts: 0, non2xx: 0 }))
    }
    const statements = systems.entityctl.statements.statements
    if (id.startsWith('Q')) expect(statements, id).toBe(1)
    else expect(statements, id).toBeLessThanOrEqual(4)
  }
}, 600_000)
