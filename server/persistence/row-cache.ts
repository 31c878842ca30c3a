// Rows that writes loaded or wrote, remembered for the next write that needs them: the
// customer and the products an order refers to are loaded by nearly every order, and a line's
// change loads the line, its order and the order's lines, each time a round trip of its own
// before the write's (test/bench W1, W2). A write's statement returns the rows it writes,
// with their new xmin, so what it leaves is remembered too.
//
// A remembered row is never trusted. The unit of work that takes one checks, inside the very
// statement that writes (or in one of its own when it writes nothing), that the row still has
// the version and the xmin it was remembered with; otherwise nothing is written and the unit
// runs again, forgetting what it took from here. The version alone would not do: a row put
// back by a restore, or changed by SQL that does not raise it, keeps its version, but every
// change of a row gives it a new xmin. So a remembered row costs a retry when another
// instance, an admin or a restore changed it, never a wrong value.
//
// A parent's members (an order's lines) are remembered as the set of their keys, taken only
// with every member's row; the check then also counts the members the parent has, so a
// member added or removed elsewhere, even by SQL that leaves the parent alone, is seen.
//
// One bound for the whole process (Database:RememberedRows), the rows unused for the longest
// going first, whatever the number of tenants. Each opened tenant database remembers under a
// scope of its own: a tenant opened again (after a restore, say) never meets the rows of its
// earlier opening; those age out.

import type { CollectionProperty, EntityModel } from '../model/model.ts'
import { columnsOf } from './entity-columns.ts'

/** A row as a load decoded it, with what proves it is still the stored one. */
export interface RememberedRow {
  readonly values: Readonly<Record<string, unknown>>
  readonly version: number
  /** The xmin of the row version read (PostgreSQL's transaction id, as text). */
  readonly xmin: string
}

/** The keys of a parent's members through one collection, all of them. */
export type RememberedMembers = readonly string[]

type Remembered = RememberedRow | RememberedMembers

export class RowCache {
  /**
   * Two generations instead of one Map kept in order of use: evicting a Map's first entry
   * walks over the holes its earlier deletions left (5-6 µs a row at 10,000 rows, a tenth of
   * a write's statement). A row used again moves to the recent generation; when that is full,
   * it becomes the older one and what was older is dropped: rows unused for the longest go.
   */
  #recent = new Map<string, Remembered>()
  #older = new Map<string, Remembered>()
  readonly #generation: number
  readonly #limit: number
  #scopes = 0
  /** Since the start, for the metrics: lookups that found what they asked for, and not. */
  readonly lookups = { found: 0, missed: 0 }
  /** Since the start: writes that found something they took changed, and ran again. */
  changed = 0

  constructor(limit: number) {
    this.#limit = limit
    this.#generation = Math.max(1, Math.ceil(limit / 2))
  }

  /** Rows and member sets held: at most the bound. */
  get size(): number {
    return this.#recent.size + this.#older.size
  }

  /** The share of one opened tenant database; undefined when nothing is to be remembered. */
  scope(): RowCacheScope | undefined {
    return this.#limit > 0 ? new RowCacheScope(this, `${++this.#scopes}:`) : undefined
  }

  get(id: string): Remembered | undefined {
    const recent = this.#recent.get(id)
    if (recent !== undefined) {
      this.lookups.found++
      return recent
    }
    const older = this.#older.get(id)
    if (older === undefined) {
      this.lookups.missed++
      return undefined
    }
    this.lookups.found++
    this.#older.delete(id)
    this.#add(id, older)
    return older
  }

  set(id: string, row: Remembered): void {
    this.#older.delete(id)
    this.#add(id, row)
  }

  delete(id: string): void {
    this.#recent.delete(id)
    this.#older.delete(id)
  }

  #add(id: string, row: Remembered): void {
    this.#recent.set(id, row)
    if (this.#recent.size >= this.#generation) {
      this.#older = this.#recent
      this.#recent = new Map()
    }
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
    return this.#cache.get(this.#rowId(entity, key)) as RememberedRow | undefined
  }

  /** Remembers a row; not one with encrypted properties, whose plain values live no longer than a unit. */
  remember(entity: EntityModel, key: string, row: RememberedRow): void {
    if (rememberable(entity)) this.#cache.set(this.#rowId(entity, key), row)
  }

  forget(entity: EntityModel, key: string): void {
    this.#cache.delete(this.#rowId(entity, key))
  }

  /** The keys of all members of `collection` of the parent `key`, as a load or a write last left them. */
  members(collection: CollectionProperty, key: string): RememberedMembers | undefined {
    return this.#cache.get(this.#membersId(collection, key)) as RememberedMembers | undefined
  }

  rememberMembers(collection: CollectionProperty, key: string, members: RememberedMembers): void {
    if (rememberable(collection.target)) this.#cache.set(this.#membersId(collection, key), members)
  }

  forgetMembers(collection: CollectionProperty, key: string): void {
    this.#cache.delete(this.#membersId(collection, key))
  }

  #rowId(entity: EntityModel, key: string): string {
    return this.#prefix + entity.name + '(' + key + ')'
  }

  #membersId(collection: CollectionProperty, key: string): string {
    return this.#rowId(collection.entity, key) + '/' + collection.name
  }

  /** A write found something it took changed (it forgets it and runs again): counted for the metrics. */
  noteChanged(): void {
    this.#cache.changed++
  }
}

const rememberables = new WeakMap<EntityModel, boolean>()

/** Whether rows of the entity may be remembered: not when it has encrypted properties. */
export function rememberable(entity: EntityModel): boolean {
  let may = rememberables.get(entity)
  if (may === undefined) rememberables.set(entity, (may = !columnsOf(entity).some((column) => column.encrypted)))
  return may
}
