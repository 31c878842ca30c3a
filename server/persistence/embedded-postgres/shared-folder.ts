// The shared folder where root relocates what the user 'postgres' cannot reach in the project:
// the binaries (binaries.ts) and the data folder (data-folder.ts). Created on first need, mode 755.

import { chmodSync, mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { EmbeddedPostgresError, firstLine } from './embedded-postgres-error.ts'
import { canEnter } from './postgres-user.ts'
import type { RunAs } from './postgres-user.ts'

/** ENTITYCTL_EMBEDDED_SHARED_DIR or /var/lib/entityctl: where root relocates binaries and data. */
export function sharedFolder(): string {
  return resolve(process.env.ENTITYCTL_EMBEDDED_SHARED_DIR || '/var/lib/entityctl')
}

/** Created if missing; made enterable by everyone if root created it without (a umask). */
export function ensureSharedFolder(runAs: RunAs): string {
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
export function openUp(first: string, last: string): void {
  for (let folder = last; ; folder = dirname(folder)) {
    chmodSync(folder, 0o755)
    if (folder === first || folder === dirname(folder)) break
  }
}
