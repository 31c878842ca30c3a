// The server process on a data folder: postmaster.pid (who runs there, and on which port),
// probing a server for connections, launching one and waiting until it answers, its log file,
// and shutting it down. The folder itself is prepared by data-folder.ts.

import { spawn, spawnSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { chownSync, closeSync, existsSync, openSync, readFileSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { platform } from 'node:os'
import { basename, join, resolve } from 'node:path'
import pg from 'pg'
import { postgresEnv } from './binaries.ts'
import type { Binaries } from './binaries.ts'
import { PASSWORD_FILE, readPassword } from './data-folder.ts'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'
import type { RunAs } from './postgres-user.ts'
import type { EmbeddedLogger, EmbeddedPostgres, RunningEmbedded } from './start-embedded.ts'

const LOG_FILE = 'entityctl-postgres.log'
const LOG_ROTATE_BYTES = 10 * 1024 * 1024

export class LockTaken extends Error {}

function connectionString(password: string, port: number): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
}

interface PidFile {
  readonly pid: number
  readonly port: number
}

/** postmaster.pid: line 1 the pid, line 4 the port. */
export function readPidFile(dataDir: string): PidFile | undefined {
  let text: string
  try {
    text = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8')
  } catch {
    return undefined
  }
  const lines = text.split('\n')
  const pid = Number(lines[0])
  const port = Number(lines[3])
  if (!Number.isInteger(pid) || pid <= 0) return { pid: 0, port: 0 }
  return { pid, port: Number.isInteger(port) ? port : 0 }
}

export function isAlive(pid: number): boolean {
  if (pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  // A zombie (exited, not yet reaped: a container's pid 1 may be slow to reap) is dead.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return true
  }
}

/** Is `pid` a postgres working on `dataDir`? undefined when we cannot tell. */
export function isPostmasterOf(pid: number, dataDir: string): boolean | undefined {
  if (platform() === 'linux') {
    try {
      // The postmaster's working folder is its data folder.
      return readlinkSync(`/proc/${pid}/cwd`) === realpathSync(dataDir)
    } catch {}
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres')
    } catch {
      return undefined
    }
  }
  const ps = spawnSync('ps', ['-p', String(pid), '-o', 'comm='], { encoding: 'utf8' })
  return ps.status === 0 ? ps.stdout.includes('postgres') : undefined
}

/**
 * The server running on dataDir, ready for connections. A postmaster.pid whose process is
 * gone, or is some other program that got the pid after a crash, is stale and removed. A
 * server still starting up is waited for (up to waitMs).
 */
export async function findRunning(dataDir: string, waitMs: number): Promise<RunningEmbedded | undefined> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const lock = readPidFile(dataDir)
    if (!lock) return undefined
    const ours = isAlive(lock.pid) ? isPostmasterOf(lock.pid, dataDir) : false
    if (ours === false) {
      removeStalePidFile(dataDir, lock.pid)
      return undefined
    }
    if (lock.port > 0) {
      const password = readPassword(dataDir)
      const url = connectionString(password, lock.port)
      const answer = await probe(url)
      if (answer.ok) {
        const same = answer.dataDirectory ? sameFolder(answer.dataDirectory, dataDir) : true
        if (same) return { pid: lock.pid, port: lock.port, connectionString: url }
      }
    }
    if (Date.now() >= deadline) {
      if (waitMs === 0) return undefined
      if (ours === undefined) {
        removeStalePidFile(dataDir, lock.pid)
        return undefined
      }
      throw new EmbeddedPostgresError(
        `a PostgreSQL (pid ${lock.pid}) runs on ${dataDir} but did not accept connections on 127.0.0.1:${lock.port} within ${waitMs} ms; ` +
          `see ${join(dataDir, LOG_FILE)}, or stop it (kill -INT ${lock.pid})`,
      )
    }
    await sleep(100)
  }
}

function removeStalePidFile(dataDir: string, pid: number): void {
  // Only if it still names the same pid: a server may have just started and rewritten it.
  const again = readPidFile(dataDir)
  if (again && again.pid === pid) rmSync(join(dataDir, 'postmaster.pid'), { force: true })
}

function sameFolder(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b)
  } catch {
    return resolve(a) === resolve(b)
  }
}

async function probe(url: string): Promise<{ ok: boolean; dataDirectory?: string; code?: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    const result = await client.query('show data_directory')
    return { ok: true, dataDirectory: result.rows[0]?.data_directory }
  } catch (error) {
    return { ok: false, code: (error as { code?: string }).code }
  } finally {
    await client.end().catch(() => {})
  }
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer()
    server.once('error', () => done(false))
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => done(true)))
  })
}

function portTakenError(port: number, dataDir: string): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    `port ${port} on 127.0.0.1 is in use by another program (not the embedded PostgreSQL of ${dataDir}). ` +
      'Stop that program, or set Database.EmbeddedPort in entityctl.json (or Database__EmbeddedPort) to a free port.',
  )
}

function openLog(dataDir: string, runAs: RunAs): number {
  const path = join(dataDir, LOG_FILE)
  try {
    if (statSync(path).size > LOG_ROTATE_BYTES) renameSync(path, `${path}.1`)
  } catch {}
  const fd = openSync(path, 'a', 0o600)
  if (runAs.uid !== undefined) chownSync(path, runAs.uid, runAs.gid!)
  return fd
}

function logTail(dataDir: string, lines = 15): string {
  try {
    return readFileSync(join(dataDir, LOG_FILE), 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

export async function launch(dataDir: string, port: number, binaries: Binaries, runAs: RunAs, logger: EmbeddedLogger, timeoutMs: number): Promise<EmbeddedPostgres> {
  // The port may be busy for a moment because a concurrent starter is checking it too, or
  // has just started the server (its postmaster.pid then appears: reuse that server).
  for (let check = 1; !(await portFree(port)); check++) {
    if (readPidFile(dataDir)) throw new LockTaken()
    if (check === 10) throw portTakenError(port, dataDir)
    await sleep(50 + Math.random() * 100)
  }
  const password = readPassword(dataDir)
  const logStart = safeSize(join(dataDir, LOG_FILE))
  const fd = openLog(dataDir, runAs)
  let child: ChildProcess
  try {
    // Own session (detached): a Ctrl-C meant for entityctl does not hit the database first;
    // the owner shuts it down after its own work is done.
    child = spawn(
      binaries.postgres,
      ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      { ...runAs, detached: true, stdio: ['ignore', fd, fd], env: postgresEnv() },
    )
  } finally {
    closeSync(fd)
  }
  let exited: { code: number | null; signal: string | null } | undefined
  let spawnError: Error | undefined
  child.on('exit', (code, signal) => (exited = { code, signal }))
  child.on('error', (error) => (spawnError = error))
  child.unref()
  logger.info(`starting the embedded PostgreSQL on 127.0.0.1:${port} (data ${dataDir})`)

  const url = connectionString(password, port)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (spawnError) throw new EmbeddedPostgresError(`cannot start ${binaries.postgres}: ${spawnError.message}`)
    if (exited) {
      const log = newLog(dataDir, logStart)
      if (/lock file "postmaster\.pid" already exists/.test(log)) throw new LockTaken()
      if (/could not bind|Address already in use/i.test(log)) throw portTakenError(port, dataDir)
      throw new EmbeddedPostgresError(`the embedded PostgreSQL exited at start (code ${exited.code}, signal ${exited.signal}); its log ${join(dataDir, LOG_FILE)} says:\n${log || logTail(dataDir)}`)
    }
    const answer = await probe(url)
    if (answer.ok) {
      // Two starters that found the port free at once each spawn a server. The second's exits
      // on the first's lock file, but its probe can reach the first's server before that exit
      // is seen: the server that answered is ours only if the lock file names our child.
      if (readPidFile(dataDir)?.pid !== child.pid) throw new LockTaken()
      break
    }
    if (answer.code === '28P01') {
      await shutdown(child.pid!, dataDir, 30_000)
      throw new EmbeddedPostgresError(`the password in ${join(dataDir, PASSWORD_FILE)} is refused by the embedded PostgreSQL`)
    }
    if (Date.now() > deadline) {
      await shutdown(child.pid!, dataDir, 30_000).catch(() => {})
      throw new EmbeddedPostgresError(`the embedded PostgreSQL did not accept connections within ${timeoutMs} ms; see ${join(dataDir, LOG_FILE)}:\n${newLog(dataDir, logStart)}`)
    }
    await sleep(100)
  }
  const pid = child.pid!
  logger.info(`embedded PostgreSQL ready (pid ${pid})`)

  let stopping: Promise<void> | undefined
  return {
    connectionString: url,
    port,
    pid,
    owned: true,
    stop: () => (stopping ??= stopOwned(pid, url, dataDir, logger)),
  }
}

function safeSize(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

function newLog(dataDir: string, from: number): string {
  try {
    const text = readFileSync(join(dataDir, LOG_FILE))
    return text.subarray(from <= text.length ? from : 0).toString('utf8').trim()
  } catch {
    return ''
  }
}

/**
 * Whether the server `pid` was left running by the process that started it, which ended
 * without stopping it (killed, crashed, stopped by a signal before it served): its parent is
 * then no longer Node.js but whoever adopted it (init, a subreaper). Such a server is nobody's:
 * the next process to reuse it takes it over (`adopt`). undefined when `ps` cannot tell.
 */
export function isOrphaned(pid: number): boolean | undefined {
  const parent = spawnSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' })
  const ppid = Number(parent.stdout?.trim())
  if (parent.status !== 0 || !Number.isInteger(ppid) || ppid <= 0) return undefined
  const command = spawnSync('ps', ['-o', 'args=', '-p', String(ppid)], { encoding: 'utf8' })
  // ps that did not run, or was killed, says nothing; one that ran and found no such process
  // says the parent is gone. Taken for gone, a live owner's server would be adopted and stopped.
  if (command.error || command.status === null) return undefined
  if (command.status !== 0) return true
  return !/^node/.test(basename(command.stdout.trim().split(/\s+/)[0] ?? ''))
}

/** Takes over a server nobody owns (isOrphaned): it is stopped as if this process had started it. */
export function adopt(running: RunningEmbedded, dataDir: string, logger: EmbeddedLogger): EmbeddedPostgres {
  logger.info(`taking over the embedded PostgreSQL left running by a process that ended without stopping it (pid ${running.pid}, port ${running.port})`)
  let stopping: Promise<void> | undefined
  return { ...running, owned: true, stop: () => (stopping ??= stopOwned(running.pid, running.connectionString, dataDir, logger)) }
}

/**
 * The owner's stop. If other processes are still connected (a server that started while our
 * CLI command held the database), the server is left running for them rather than pulled away.
 */
async function stopOwned(pid: number, url: string, dataDir: string, logger: EmbeddedLogger): Promise<void> {
  if (!isAlive(pid)) return
  const others = await otherClients(url)
  if (others > 0) {
    logger.warn(`embedded PostgreSQL left running (pid ${pid}): ${others} other connection(s) still use it`)
    return
  }
  logger.info(`stopping the embedded PostgreSQL (pid ${pid})`)
  await shutdown(pid, dataDir, 30_000)
}

async function otherClients(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    const result = await client.query(
      "select client_port from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
    )
    // Connections of this very process (a pool its caller forgot to close) do not count.
    const mine = ownLocalPorts()
    return result.rows.filter((row) => !mine.has(Number(row.client_port))).length
  } catch {
    return 0
  } finally {
    await client.end().catch(() => {})
  }
}

/** Linux: local TCP ports of this process's sockets (/proc/self/fd → inode → /proc/net/tcp). */
function ownLocalPorts(): Set<number> {
  const ports = new Set<number>()
  if (platform() !== 'linux') return ports
  const inodes = new Set<string>()
  try {
    for (const fd of readdirSync('/proc/self/fd')) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))
        if (match) inodes.add(match[1])
      } catch {}
    }
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      let text = ''
      try {
        text = readFileSync(table, 'utf8')
      } catch {
        continue
      }
      for (const line of text.split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/)
        if (fields.length > 9 && inodes.has(fields[9])) ports.add(Number.parseInt(fields[1].split(':')[1], 16))
      }
    }
  } catch {}
  return ports
}

/** Fast shutdown (SIGINT: roll back open transactions, checkpoint, exit); SIGQUIT if it hangs. */
export async function shutdown(pid: number, dataDir: string, timeoutMs: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT')
  } catch {
    return
  }
  // Done when postmaster.pid is gone (the postmaster removes it as its last act) or the
  // process is dead (then any file left is stale).
  const deadline = Date.now() + timeoutMs
  while (existsSync(join(dataDir, 'postmaster.pid'))) {
    if (!isAlive(pid)) {
      removeStalePidFile(dataDir, pid)
      break
    }
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGQUIT')
      } catch {}
      throw new EmbeddedPostgresError(`the embedded PostgreSQL (pid ${pid}) did not stop within ${timeoutMs} ms; sent SIGQUIT`)
    }
    await sleep(50)
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms))
}
