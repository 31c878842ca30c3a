// vitest globalSetup (runs once, in the main process, before any test worker starts).
//
// TEST_DATABASE_URL set: the tests use that PostgreSQL server; fail fast, with a clear message,
// when it is not reachable.
// TEST_DATABASE_URL unset: start the embedded PostgreSQL on a temporary data folder and a free
// port, and publish its URL as process.env.TEST_DATABASE_URL (test workers and the processes
// the tests spawn inherit it) and as inject('testDatabaseUrl'); teardown stops it and removes
// the folder.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { EmbeddedPostgresError, embeddedDataLocation, startEmbeddedPostgres, stopEmbeddedPostgres } from '../../server/persistence/embedded-postgres/start-embedded.ts'
import { freePort } from './free-port.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabaseUrl: string
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.TEST_DATABASE_URL
  if (given) {
    await checkDatabase(given)
    project.provide('testDatabaseUrl', given)
    return undefined
  }

  const root = mkdtempSync(join(tmpdir(), 'entityctl-test-pg-'))
  // Ours: as root, the server runs as 'postgres', which must enter it (mkdtemp makes it 700).
  chmodSync(root, 0o755)
  const dataDir = join(root, 'postgres')
  const stop = async () => {
    await stopEmbeddedPostgres(dataDir).catch(() => {})
    // As root in a folder the user 'postgres' cannot enter, the cluster was relocated.
    const location = embeddedDataLocation(dataDir)
    if (location !== dataDir) rmSync(location, { recursive: true, force: true })
    rmSync(root, { recursive: true, force: true })
    delete process.env.TEST_DATABASE_URL
  }
  try {
    const warn = (message: string) => process.stderr.write(`[test PostgreSQL] ${message}\n`)
    let url: string | undefined
    // A free port may be taken between the check and the start: try another one.
    for (let attempt = 1; url === undefined; attempt++) {
      try {
        url = (await startEmbeddedPostgres({ dataDir, port: await freePort(), logger: { info() {}, warn, error: warn } })).connectionString
      } catch (error) {
        if (attempt >= 3 || !(error instanceof EmbeddedPostgresError && /is in use by another program/.test(error.message))) throw error
      }
    }
    process.env.TEST_DATABASE_URL = url
    project.provide('testDatabaseUrl', url)
  } catch (error) {
    await stop()
    throw new Error(`TEST_DATABASE_URL is unset and the embedded PostgreSQL for the tests did not start: ${(error as Error).message}`)
  }
  return stop
}

async function checkDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    throw new Error(`The test PostgreSQL at TEST_DATABASE_URL=${redact(url)} is not reachable (${(error as Error).message}). Fix it, or unset TEST_DATABASE_URL to use the embedded PostgreSQL.`)
  } finally {
    await client.end().catch(() => {})
  }
}

function redact(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return url
  }
}

