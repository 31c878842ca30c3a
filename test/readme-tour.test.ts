// The README's five-minute tour, run as written: its `sh` blocks, in order, by bash with the
// real curl, against a real server (the test PostgreSQL, a fresh config and tenant). Only the
// lines that name the installation change: `bin/entityctl serve &` (the server is started
// here) and the API, TENANT and PASSWORD settings. Every curl's status is recorded by a
// wrapper around the real one, so the test can say which request of the tour went wrong.

import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ADMIN, startTestServer, type TestServer } from './support/test-server.ts'

const README = fileURLToPath(new URL('../README.md', import.meta.url))
const HAS_CURL = spawnSync('curl', ['--version']).status === 0
const dir = mkdtempSync(join(tmpdir(), 'entityctl-tour-'))
let server: TestServer

beforeAll(async () => {
  if (HAS_CURL) server = await startTestServer()
})
afterAll(async () => {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** The `sh` blocks of the README's section "A five-minute tour", in order. */
function tourScript(): string {
  const readme = readFileSync(README, 'utf8')
  const start = readme.indexOf('## A five-minute tour')
  const end = readme.indexOf('\n## ', start + 1)
  expect(start, 'README has a section "A five-minute tour"').toBeGreaterThan(-1)
  const section = readme.slice(start, readme.indexOf('\n### ', start) > -1 ? Math.min(end, readme.indexOf('\n### ', start)) : end)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((block) => block[1]).join('\n')
}

/** The tour with this test's server in place of the installation's. */
function adapted(script: string): string {
  const lines = script.split('\n')
  const replace = (pattern: RegExp, replacement: string | null) => {
    const at = lines.findIndex((line) => pattern.test(line))
    expect(at, `the tour has a line matching ${pattern}`).toBeGreaterThan(-1)
    if (replacement === null) lines.splice(at, 1)
    else lines[at] = replacement
  }
  replace(/^bin\/entityctl serve &/, null)
  replace(/^API=\S+ TENANT=demo\b/, `API=${server.api} TENANT=${server.tenants[0]}`)
  replace(/^PASSWORD=/, `PASSWORD='${ADMIN.password}'`)
  return lines.join('\n')
}

const STATUS_RECORDER = `set -eo pipefail
curl() {
  local body status url arg
  for arg; do case $arg in http*) url=$arg ;; esac; done
  body=$(mktemp)
  status=$(command curl -o "$body" -w '%{http_code}' "$@") || { rm -f "$body"; return 1; }
  cat "$body"
  rm -f "$body"
  echo "$status $url" >> "$STATUSES"
}
`

it.skipIf(!HAS_CURL)('runs the five-minute tour as written: every request answers as the README says', { timeout: 60_000 }, async () => {
  const statuses = join(dir, 'statuses')
  const script = STATUS_RECORDER + adapted(tourScript())
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: dir, env: { ...process.env, STATUSES: statuses }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 50_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
  const recorded = readFileSync(statuses, 'utf8').trim().split('\n')
  const report = `${recorded.join('\n')}\n--- stdout\n${run.stdout.slice(0, 3000)}\n--- stderr\n${run.stderr}`
  expect(run.code, report).toBe(0)
  // sign-in, create, read, query, patch, $metadata, product, order, delete the order, delete the customer
  expect(recorded.map((line) => Number(line.split(' ')[0])), report).toEqual([200, 200, 200, 200, 204, 200, 200, 200, 204, 204])
  // The answers the README shows (PostgreSQL writes entity bodies with a space around each
  // colon and after each comma; the README shows them compact).
  expect(run.stdout).toMatch(spaced('"Name":"Ada Lovelace","Country":"GB","Title":"Ada Lovelace"}'))
  expect(run.stdout).toMatch(spaced('"@odata.count":1'))
  expect(run.stdout).toMatch(spaced('"Total":9.00,"Lines":[{"@odata.etag":"W/\\"1.'))
  expect(run.stdout).toMatch(spaced('"Quantity":2,"UnitPrice":4.50,"LineTotal":9.00}]}'))
  const readme = readFileSync(README, 'utf8')
  expect(readme).toContain('"Quantity":2,"UnitPrice":4.50,"LineTotal":9.00}]}')
})

/** A compact JSON snippet as a pattern that also matches it with spaces after its : and , between tokens. */
function spaced(compact: string): RegExp {
  const tokens = compact.split(/(?<=[:,])(?=["[{0-9a-z-])/)
  return new RegExp(tokens.map((token) => token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:$/, ' ?: ?').replace(/,$/, ', ?')).join(''))
}
