// Writers that meet on the same rows at once, as concurrent requests may: one write per key,
// each loading what it needs before any of them changes anything and flushes. Without the
// wait, the first would often be done before the last had loaded, and nothing would meet.

import { poolSession } from '../../server/persistence/session.ts'
import type { UnitOfWork } from '../../server/persistence/unit-of-work.ts'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'

/** How one write ended: the attempts it made, and the error it ended with, if any. */
export interface WriteOutcome {
  readonly attempts: number
  readonly error?: Error
}

/**
 * Runs a write per key on `db` (a session of its own each): `load` runs on every write's first
 * attempt before any write goes on to `change` (and on a later attempt at once), then the
 * unit flushes. Returns each write's outcome, in the order of `keys`.
 */
export function writersAtOnce<T>(
  db: TenantDatabase,
  keys: readonly string[],
  load: (unit: UnitOfWork, key: string) => Promise<T>,
  change: (loaded: T, unit: UnitOfWork, key: string) => void,
): Promise<WriteOutcome[]> {
  let loaded = 0
  const allLoaded = Promise.withResolvers<void>()
  return Promise.all(
    keys.map(async (key) => {
      let attempts = 0
      try {
        await poolSession(db).write(async (unit) => {
          attempts++
          const found = await load(unit, key)
          if (++loaded === keys.length) allLoaded.resolve()
          await allLoaded.promise
          change(found, unit, key)
        })
        return { attempts }
      } catch (error) {
        return { attempts, error: error as Error }
      }
    }),
  )
}
