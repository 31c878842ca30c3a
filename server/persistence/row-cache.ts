// Rows that writes loaded by key, remembered for the next write that needs them: the customer
// and the products an order refers to are loaded by nearly every order, and their load was a
// round trip of its own, as costly as the write (test/bench W1).
//
// A remembered row is never trusted. The unit of work that takes one checks, inside the very
// statement that writes (or in one of its own when it writes nothing), that the row still has
// the version and the xmin it was remembered with; otherwise nothing is written and the unit
// runs again, forgetting what it took from here. The version alone would not do: a row put
// back by a restore, or changed by SQL that does not raise it, keeps its version, but every
// change of a row gives it a new xmin. So a remembered row costs a retry when another
// instance, an admin or a restore changed it, never a wrong value.
//
// One bound for the whole process (Database:RememberedRows), least recently used first out,
// whatever the number of tenants. Each opened tenant database remembers under a scope of its
// own: a tenant opened again (after a restore, say) never meets the rows of its earlier
// opening; those age out.

import type { EntityModel } from '../model/model.ts'
import { columnsOf } from './entity-columns.ts'

/** A row as a load decoded it, with what proves it is still the stored one. */
export interface RememberedRow {
  readonly values: Readonly<Record<string, unknown>>
  readonly version: number
  /** The xmin of the row version read (PostgreSQL's transaction id, as text). */
  readonly xmin: string
}

export class RowCache {
  readonly #rows = new Map<string, RememberedRow>()
  readonly #limit: number
  #scopes = 0

  constructor(limit: number) {
    this.#limit = limit
  }

  get size(): number {
    return this.#rows.size
  }

  /** The share of one opened tenant database; undefined when nothing is to be remembered. */
  scope(): RowCacheScope | undefined {
    return this.#limit > 0 ? new RowCacheScope(this, `${++this.#scopes}:`) : undefined
  }

  get(id: string): RememberedRow | undefined {
    const row = this.#rows.get(id)
    if (row) {
      // Used again: it goes to the back of the line.
      this.#rows.delete(id)
      this.#rows.set(id, row)
    }
    return row
  }

  set(id: string, row: RememberedRow): void {
    this.#rows.delete(id)
    this.#rows.set(id, row)
    if (this.#rows.size > this.#limit) this.#rows.delete(this.#rows.keys().next().value!)
  }

  delete(id: string): void {
    this.#rows.delete(id)
  }
}

export class RowCacheScope {
  readonly #cache: RowCache
  readonly #prefix: string

  constructor(cache: RowCache, prefix: string) {
    this.#cache = cache
    this.#prefix = prefix
  }

  get(entity: EntityModel, key: string): RememberedRow | undefined {
    return this.#cache.get(this.#prefix + entity.name + '(' + key + ')')
  }

  /** Remembers a row; not one with encrypted properties, whose plain values live no longer than a unit. */
  remember(entity: EntityModel, key: string, row: RememberedRow): void {
    if (!hasEncryptedColumns(entity)) this.#cache.set(this.#prefix + entity.name + '(' + key + ')', row)
  }

  forget(entity: EntityModel, key: string): void {
    this.#cache.delete(this.#prefix + entity.name + '(' + key + ')')
  }
}

const encrypted = new WeakMap<EntityModel, boolean>()

function hasEncryptedColumns(entity: EntityModel): boolean {
  let found = encrypted.get(entity)
  if (found === undefined) encrypted.set(entity, (found = columnsOf(entity).some((column) => column.encrypted)))
  return found
}
