// The embedded PostgreSQL: first start initialises the folder, a second caller reuses the
// running server (and cannot stop it), the owner stops it, it restarts on the same data, a
// stale postmaster.pid is cleared, and a port held by another program is reported clearly.
// As root, a data folder the user 'postgres' cannot enter is relocated.
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import type { Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { embeddedDataLocation, isEmbeddedRunning, startEmbeddedPostgres, stopEmbeddedPostgres } from '../../server/persistence/embedded-postgres/start-embedded.ts'
import type { EmbeddedPostgres } from '../../server/persistence/embedded-postgres/start-embedded.ts'
import { isOrphaned } from '../../server/persistence/embedded-postgres/postmaster.ts'
import { freePort } from '../support/free-port.ts'

let root: string
let dataDir: string
let port: number
const started: EmbeddedPostgres[] = []

async function query<T = Record<string, unknown>>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(sql)).rows as T[]
  } finally {
    await client.end()
  }
}

async function start(): Promise<EmbeddedPostgres> {
  const server = await startEmbeddedPostgres({ dataDir, port })
  started.push(server)
  return server
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'entityctl-embedded-'))
  chmodSync(root, 0o755) // as root, the server runs as 'postgres', which must enter it
  dataDir = join(root, 'data', 'postgres')
  port = await freePort()
})

afterAll(async () => {
  for (const server of started) if (server.owned) await server.stop().catch(() => {})
  await stopEmbeddedPostgres(dataDir).catch(() => {})
  rmSync(root, { recursive: true, force: true })
})

describe('embedded PostgreSQL', () => {
  test('initialises on first start, with locale C and UTF8, and accepts queries', async () => {
    const server = await start()
    expect(server.owned).toBe(true)
    expect(server.connectionString).toMatch(new RegExp(`^postgres://postgres:[^@]+@127\\.0\\.0\\.1:${port}/postgres$`))
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true)
    expect(statSync(join(dataDir, 'entityctl.password')).mode & 0o077).toBe(0)
    const [row] = await query<{ collate: string; encoding: string; ordered: boolean }>(
      server.connectionString,
      "select datcollate as collate, pg_encoding_to_char(encoding) as encoding, 'B' < 'a' as ordered from pg_database where datname = 'postgres'",
    )
    expect(row).toEqual({ collate: 'C', encoding: 'UTF8', ordered: true })
    await query(server.connectionString, 'create table kept (value text); insert into kept values ($$survives a restart$$)')
  })

  test('a password is required, even on 127.0.0.1', async () => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: 'wrong', database: 'postgres' })
    client.on('error', () => {})
    await expect(client.connect()).rejects.toThrow(/password authentication failed/)
    await client.end().catch(() => {})
  })

  test('a second caller reuses the running server and its stop() leaves it running', async () => {
    const owner = started[0]
    const second = await start()
    expect(second.owned).toBe(false)
    expect(second.pid).toBe(owner.pid)
    expect(second.connectionString).toBe(owner.connectionString)
    const running = await isEmbeddedRunning(dataDir)
    expect(running).toEqual({ pid: owner.pid, port, connectionString: owner.connectionString })
    await second.stop()
    expect(await isEmbeddedRunning(dataDir)).toBeDefined()
  })

  test('the owner stops it, even with its own connection still open', async () => {
    const owner = started[0]
    const client = new pg.Client({ connectionString: owner.connectionString })
    client.on('error', () => {})
    await client.connect()
    await owner.stop()
    await client.end().catch(() => {})
    expect(await isEmbeddedRunning(dataDir)).toBeUndefined()
    expect(existsSync(join(dataDir, 'postmaster.pid'))).toBe(false)
  })

  test('restarts on the same data folder with its data', async () => {
    const server = await start()
    expect(server.owned).toBe(true)
    expect(await query(server.connectionString, 'select value from kept')).toEqual([{ value: 'survives a restart' }])
    await server.stop()
  })

  test('a stale postmaster.pid (dead process, or a pid reused by another program) is cleared', async () => {
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' })
    try {
      for (const pid of [2 ** 22 + 17, sleeper.pid!]) {
        writeFileSync(join(dataDir, 'postmaster.pid'), `${pid}\n${dataDir}\n1700000000\n${port}\n\n127.0.0.1\n  1234  5678\nready   \n`)
        const server = await start()
        expect(server.owned).toBe(true)
        expect(server.pid).not.toBe(pid)
        expect(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]).toBe(String(server.pid))
        await server.stop()
      }
    } finally {
      sleeper.kill()
    }
  })

  test('a port held by another program is reported as such', async () => {
    const blocker: Server = createServer()
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve))
    try {
      await expect(start()).rejects.toThrow(`port ${port} on 127.0.0.1 is in use by another program`)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
    expect(await isEmbeddedRunning(dataDir)).toBeUndefined()
  })

  test('two callers starting a new folder at once share one server', async () => {
    const fresh = join(root, 'concurrent')
    const freshPort = await freePort()
    const both = await Promise.all([0, 1].map(() => startEmbeddedPostgres({ dataDir: fresh, port: freshPort })))
    try {
      expect(both.map((s) => s.owned).sort()).toEqual([false, true])
      expect(both[0].pid).toBe(both[1].pid)
      expect(await query(both[0].connectionString, 'select 1 as one')).toEqual([{ one: 1 }])
    } finally {
      for (const server of both) await server.stop()
    }
    expect(await isEmbeddedRunning(fresh)).toBeUndefined()
  })

  test('a server whose owner was killed is taken over by the next process, which stops it', async () => {
    const folder = join(root, 'orphaned')
    const folderPort = await freePort()
    const module = new URL('../../server/persistence/embedded-postgres/start-embedded.ts', import.meta.url).pathname
    const owner = spawn(process.execPath, ['--input-type=module', '-e', `
      const { startEmbeddedPostgres } = await import(${JSON.stringify(module)})
      const server = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(folder)}, port: ${folderPort} })
      console.log(server.pid)
      setInterval(() => {}, 1000)
    `], { stdio: ['ignore', 'pipe', 'inherit'] })
    const pid = Number(await new Promise<string>((resolve) => owner.stdout!.once('data', (chunk) => resolve(String(chunk)))))
    const gone = new Promise((resolve) => owner.once('exit', resolve))
    owner.kill('SIGKILL')
    await gone
    expect((await isEmbeddedRunning(folder))?.pid).toBe(pid)

    try {
      const next = await startEmbeddedPostgres({ dataDir: folder, port: folderPort })
      expect([next.owned, next.pid]).toEqual([true, pid])
      await next.stop()
      expect(await isEmbeddedRunning(folder)).toBeUndefined()
    } finally {
      await stopEmbeddedPostgres(folder).catch(() => {})
    }
  })

  test('a non-empty folder that is no cluster is refused', async () => {
    writeFileSync(join(root, 'placeholder'), '')
    await expect(startEmbeddedPostgres({ dataDir: root, port })).rejects.toThrow(/holds no PostgreSQL cluster/)
    expect(existsSync(join(root, 'PG_VERSION'))).toBe(false)
  })

  test.skipIf(process.getuid?.() !== 0)('as root, a data folder user postgres cannot enter is relocated; reuse and stop follow it', async () => {
    const shared = join(root, 'shared')
    mkdirSync(shared, { mode: 0o755 })
    const closed = mkdtempSync(join(tmpdir(), 'entityctl-private-')) // mode 700
    const configured = join(closed, 'data', 'postgres')
    process.env.ENTITYCTL_EMBEDDED_SHARED_DIR = shared
    try {
      const warnings: string[] = []
      const server = await startEmbeddedPostgres({ dataDir: configured, port: await freePort(), logger: { info() {}, warn: (m) => warnings.push(m), error() {} } })
      try {
        expect(server.owned).toBe(true)
        const location = embeddedDataLocation(configured)
        expect(location).toMatch(new RegExp(`^${shared}/data-[0-9a-f]{16}$`))
        expect(warnings.join('\n')).toContain(`its data lives in ${location}`)
        expect(readFileSync(join(location, 'entityctl.origin'), 'utf8')).toBe(`${configured}\n`)
        expect(existsSync(join(closed, 'data'))).toBe(false)
        expect(await query(server.connectionString, 'show data_directory')).toEqual([{ data_directory: location }])
        expect((await isEmbeddedRunning(configured))?.pid).toBe(server.pid)
      } finally {
        expect(await stopEmbeddedPostgres(configured)).toBe(true)
      }
      expect(await isEmbeddedRunning(configured)).toBeUndefined()
    } finally {
      delete process.env.ENTITYCTL_EMBEDDED_SHARED_DIR
      rmSync(closed, { recursive: true, force: true })
    }
  })
})

describe('whether a running server was left by its owner', () => {
  test("is unknown, not orphaned, when ps cannot say what the server's parent is", () => {
    // A ps that gives the parent's pid, then is killed asking what that parent runs: taken for
    // a parent gone, a live owner's server would be adopted, and stopped under it.
    const bin = mkdtempSync(join(tmpdir(), 'entityctl-ps-'))
    writeFileSync(join(bin, 'ps'), `#!/bin/sh\ncase "$*" in *ppid=*) echo ${process.pid} ;; *) kill -9 $$ ;; esac\n`, { mode: 0o755 })
    const path = process.env.PATH
    process.env.PATH = `${bin}:${path}`
    try {
      expect(isOrphaned(process.pid)).toBeUndefined()
    } finally {
      process.env.PATH = path
      rmSync(bin, { recursive: true, force: true })
    }
  })
})
