// A log that cannot be written never stops the server (http/log-lines.ts): `bin/entityctl serve`
// with its stdout on /dev/full (every write fails with ENOSPC) keeps answering, says once on
// stderr that its log cannot be written, and stops cleanly. Before, the write error was thrown
// out of the log's destination and ended the process.

import { spawn } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { freePort } from '../support/free-port.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server?.stop())

it('keeps serving with its stdout on a full device, and says so once on stderr', { timeout: 120_000 }, async () => {
  const port = await freePort()
  const full = openSync('/dev/full', 'w')
  const child = spawn(join(root, 'bin/entityctl'), ['--config', server.configPath, 'serve', '--port', String(port)], {
    env: { ...process.env, Server__LogLevel: 'info' },
    stdio: ['ignore', full, 'pipe'],
  })
  closeSync(full)
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  try {
    const origin = `http://127.0.0.1:${port}`
    // Ready when it answers: its "serving" line went to the full device like every other.
    for (const started = Date.now(); ; ) {
      const health = await fetch(`${origin}/healthz`).then((r) => r.status, () => 0)
      if (health === 200) break
      const gone = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('waiting'), 100))])
      if (gone !== 'waiting') throw new Error(`serve exited (${gone}) before answering: ${stderr}`)
      if (Date.now() - started > 60_000) throw new Error(`serve did not answer /healthz within 60 s: ${stderr}`)
    }
    const token = await server.token()
    // Far more lines than one batch, each write of them refused.
    const answers = await Promise.all(Array.from({ length: 300 }, () => call(`${origin}/api/Customers?$top=1`, { token })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(300).fill(200))
    expect(child.exitCode).toBeNull()
    expect(stderr.match(/the log cannot be written/g)).toHaveLength(1)
    expect(stderr).toContain('ENOSPC')
  } finally {
    child.kill('SIGTERM')
  }
  // A process that cannot stop (its exit stuck on the log) is killed, and fails the test.
  const stuck = setTimeout(() => child.kill('SIGKILL'), 20_000)
  expect(await exited).toBe(0)
  clearTimeout(stuck)
})
