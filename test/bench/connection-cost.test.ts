// `node test/bench/connection-cost.ts`, small: it prints a cost for each way of connecting and
// drops the databases it made. The figures themselves are the machine's, not judged here.

import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { TEST_DATABASE_URL } from '../support/test-server.ts'
import { withClient } from './databases.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

it('measures both ways of connecting and leaves no database behind', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const args = ['test/bench/connection-cost.ts', '--connections', '30', '--databases', '2', '--database-url', TEST_DATABASE_URL]
    execFile(process.execPath, args, { cwd: root }, (error, out, err) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout: out, stderr: err }),
    )
  })
  expect(code, `${stdout}\n${stderr}`).toBe(0)
  const lines = stdout.trim().split('\n')
  expect(lines.map((line) => line.slice(0, line.indexOf(':')))).toEqual(['connect and end', 'connect, one key read, end'])
  for (const line of lines) {
    const [postgres, client, elapsed] = [...line.matchAll(/(\d+\.\d\d) ms/g)].map((match) => Number(match[1]))
    // A backend start costs PostgreSQL CPU, the client some, and the whole takes time. /proc
    // counts CPU in 10 ms ticks: 30 connections of a few ms each are many ticks.
    expect(postgres, line).toBeGreaterThan(0)
    expect(client, line).toBeGreaterThan(0)
    expect(elapsed, line).toBeGreaterThan(0)
  }
  const left = await withClient(TEST_DATABASE_URL, (client) => client.query("select datname from pg_database where datname like 'bench_connection_cost_%'"))
  expect(left.rows).toEqual([])
})
