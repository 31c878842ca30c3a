// Who runs initdb and postgres. PostgreSQL refuses to run as root, so a root process runs them
// as the OS user `postgres` (created here if missing); any other user runs them as itself.
// canEnter tells which folders that user can reach, which decides relocation (shared-folder.ts,
// binaries.ts, data-folder.ts).

import { spawnSync, execFileSync } from 'node:child_process'
import { EmbeddedPostgresError, firstLine } from './embedded-postgres-error.ts'
import type { EmbeddedLogger } from './start-embedded.ts'

export interface RunAs {
  readonly uid?: number
  readonly gid?: number
}

/** Root: the OS user `postgres` (created if missing, as embedded-postgres does). Others: themselves. */
export async function postgresUser(logger: EmbeddedLogger): Promise<RunAs> {
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

export function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined
  } catch {
    return undefined
  }
}

/** Can `runAs` enter `folder` (x on it and on every folder above it)? */
export function canEnter(folder: string, runAs: RunAs): boolean {
  if (runAs.uid === undefined) return true
  return spawnSync('/bin/sh', ['-c', 'cd "$1"', 'sh', folder], { ...runAs, stdio: 'ignore' }).status === 0
}
