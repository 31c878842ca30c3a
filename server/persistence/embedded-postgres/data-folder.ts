// The data folder: where the cluster of a configured folder lives (in place, or as root in the
// shared folder when the user 'postgres' cannot enter it), and its creation by initdb with a
// generated password kept in it. The server running on it is postmaster.ts's job.

import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { chownSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { postgresEnv } from './binaries.ts'
import type { Binaries } from './binaries.ts'
import { EmbeddedPostgresError, firstLine } from './embedded-postgres-error.ts'
import { canEnter } from './postgres-user.ts'
import type { RunAs } from './postgres-user.ts'
import { ensureSharedFolder, openUp, sharedFolder } from './shared-folder.ts'
import type { EmbeddedLogger } from './start-embedded.ts'

export const PASSWORD_FILE = 'entityctl.password'
/** In a relocated data folder: the configured folder it stands for. */
const ORIGIN_FILE = 'entityctl.origin'

export function hasCluster(dataDir: string): boolean {
  return existsSync(join(dataDir, 'PG_VERSION'))
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
export function placeDataDir(configured: string, runAs: RunAs): string {
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
export async function initialiseCluster(dataDir: string, binaries: Binaries, runAs: RunAs, logger: EmbeddedLogger, origin?: string): Promise<void> {
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

export function readPassword(dataDir: string): string {
  try {
    return readFileSync(join(dataDir, PASSWORD_FILE), 'utf8').trim()
  } catch (error) {
    throw new EmbeddedPostgresError(`cannot read the embedded PostgreSQL password ${join(dataDir, PASSWORD_FILE)}: ${firstLine(error)}`)
  }
}
