// What a unit of work takes from the rows earlier writes remembered (row-cache.ts), and what
// it leaves there for the next write. A load asks here first: a stub is filled from its
// remembered row, a parent's members from its remembered member set with every member's row,
// and nothing is loaded when all it needs is there. What was taken is held here until the
// flush: its statement checks it (write-statement.ts rememberedCheck), and a unit that writes
// nothing checks it with a statement of its own. Once the unit writes, the rows its statement
// returned and the member sets it left are remembered; when it meets a conflict, what it took
// and what it set out to write are forgotten, so that it loads them when it runs again.
// The unit owns one of these (unit-of-work.ts) and decides what a conflict means; this holds
// what was taken and speaks to the remembered rows.

import type { CollectionProperty, EntityModel, Model } from '../model/model.ts'
import { KEY } from '../model/model.ts'
import type { PropertyCipher } from '../tenancy/property-encryption.ts'
import { decodeRow, XMIN } from './entity-columns.ts'
import type { RememberedMembers, RememberedRow, RowCacheScope } from './row-cache.ts'
import { SqlParameters } from './sql-parameters.ts'
import type { Sql } from './sql.ts'
import type { Entry, ParentPrefetch, UnitOfWork } from './unit-of-work.ts'
import { rememberedCheck, withSteps, type PendingRow, type ReturnedRows, type Taken, type TakenMembers } from './write-statement.ts'

/** What the remembered rows reach of the unit that owns them besides its public methods. */
export interface UnitInternals {
  /** A stub becomes the stored row; values the unit assigned to it stay. */
  fill(entry: Entry, row: RememberedRow): void
  /** Stored members of collections the unit knows (loaded or taken), per parent and navigation. */
  readonly members: ReadonlyMap<Entry, ReadonlyMap<string, readonly Entry[]>>
  /** `entries` are all the stored members of `collection` of `parent`. */
  setMembers(parent: Entry, collection: CollectionProperty, entries: Entry[]): void
  readonly cipher?: PropertyCipher
}

/** A parent's members through a collection as a write left them (undefined: the parent is gone). */
export type MemberSet = readonly [collection: CollectionProperty, parentKey: string, members: RememberedMembers | undefined]

export class RememberedRows {
  readonly #unit: UnitOfWork
  /** Where rows are remembered; undefined for a unit inside a transaction, which neither takes nor remembers. */
  readonly #scope: RowCacheScope | undefined
  readonly #internals: UnitInternals
  /** Entries taken from the remembered rows, with what the flush checks they still are. */
  readonly #taken = new Map<Entry, RememberedRow>()
  /** Members taken from the remembered ones: the flush checks each parent has no more and no fewer. */
  readonly #takenMembers: TakenMembers[] = []

  constructor(unit: UnitOfWork, scope: RowCacheScope | undefined, internals: UnitInternals) {
    this.#unit = unit
    this.#scope = scope
    this.#internals = internals
  }

  /** Whether what the unit loads and writes is remembered (and may be taken). */
  get remembering(): boolean {
    return this.#scope !== undefined
  }

  /** Whether the unit took rows from the remembered ones (its answer then rests on them). */
  get took(): boolean {
    return this.#taken.size > 0 || this.#takenMembers.length > 0
  }

  /** Whether `entry` was taken from the remembered rows. */
  wasTaken(entry: Entry): boolean {
    return this.#taken.has(entry)
  }

  /**
   * Fills a stub from the remembered rows when its row is there; with `parents`, only when
   * each parent's row and all its members are there too (otherwise one statement loads them
   * all, reaching the parents through the row). The flush checks what was taken.
   */
  takeRow(entry: Entry, parents: readonly ParentPrefetch[] = []): void {
    const remembered = this.#scope
    const row = remembered?.get(entry.entity, entry.key)
    if (!row) return
    const rows: [EntityModel, string, RememberedRow][] = [[entry.entity, entry.key, row]]
    const sets: [EntityModel, string, CollectionProperty, RememberedMembers][] = []
    for (const { reference, members, withMembers } of parents) {
      const parentKey = row.values[reference.name]
      if (typeof parentKey !== 'string') continue
      const parent = this.#unit.get(members.entity, parentKey)
      if (!parent || parent.state === 'stub') {
        const parentRow = remembered!.get(members.entity, parentKey)
        if (!parentRow) return
        rows.push([members.entity, parentKey, parentRow])
      }
      if (!withMembers || (parent && this.#internals.members.get(parent)?.has(members.name))) continue
      const keys = remembered!.members(members, parentKey)
      // The row must be among its parent's members, as the statement would have found it.
      if (!keys?.includes(entry.key) || !this.#membersRemembered(members, keys, rows)) return
      sets.push([members.entity, parentKey, members, keys])
    }
    for (const [entity, key, taken] of rows) this.#take(this.#unit.reference(entity, key), taken)
    for (const [entity, key, collection, keys] of sets) this.#takeKeys(this.#unit.reference(entity, key), collection, keys)
  }

  /** Takes all members of `collection` of `parent` from the remembered ones, when every one is there. */
  takeMembers(parent: Entry, collection: CollectionProperty): boolean {
    const keys = this.#scope?.members(collection, parent.key)
    const rows: [EntityModel, string, RememberedRow][] = []
    if (!keys || !this.#membersRemembered(collection, keys, rows)) return false
    for (const [entity, key, taken] of rows) this.#take(this.#unit.reference(entity, key), taken)
    this.#takeKeys(parent, collection, keys)
    return true
  }

  /** Adds to `rows` the remembered rows of the members the unit has not met; false when one is not remembered. */
  #membersRemembered(collection: CollectionProperty, keys: RememberedMembers, rows: [EntityModel, string, RememberedRow][]): boolean {
    for (const key of keys) {
      const member = this.#unit.get(collection.target, key)
      if (member && member.state !== 'stub') continue
      const row = this.#scope!.get(collection.target, key)
      if (!row) return false
      rows.push([collection.target, key, row])
    }
    return true
  }

  #take(entry: Entry, row: RememberedRow): void {
    if (entry.state !== 'stub') return
    this.#internals.fill(entry, row)
    this.#taken.set(entry, row)
  }

  #takeKeys(parent: Entry, collection: CollectionProperty, keys: RememberedMembers): void {
    this.#internals.setMembers(parent, collection, keys.map((key) => this.#unit.get(collection.target, key)!))
    this.#takenMembers.push({ collection, parentKey: parent.key, count: keys.length })
  }

  /** A row the unit loaded, for the next write. */
  rememberLoaded(entity: EntityModel, key: string, row: RememberedRow): void {
    this.#scope?.remember(entity, key, row)
  }

  /** The keys of all the members of `collection` of the parent `parentKey` the unit loaded, for the next write. */
  rememberLoadedMembers(collection: CollectionProperty, parentKey: string, keys: RememberedMembers): void {
    this.#scope?.rememberMembers(collection, parentKey, keys)
  }

  /**
   * What the flush's statement writing `rows` checks of what was taken, and whether it returns
   * the rows it writes, to remember them.
   */
  checkedBy(rows: readonly PendingRow[]): Taken & { readonly returnWritten: boolean } {
    // A taken row the statement updates or deletes is checked by that step, over its version and xmin.
    const written = new Set(rows.map((row) => row.entry))
    const taken = [...this.#taken].filter(([entry]) => !written.has(entry))
    return { rows: taken, members: this.#takenMembers, returnWritten: this.remembering }
  }

  /**
   * Checks, in a statement of its own on `sql`, that the rows taken are still stored as they
   * were remembered: a conflict otherwise (isRememberedRowChanged).
   */
  async check(sql: Sql): Promise<void> {
    if (!this.took) return
    const params = new SqlParameters()
    const steps: string[] = []
    const check = rememberedCheck(params, { rows: [...this.#taken], members: this.#takenMembers }, steps, '0')
    await sql(`${withSteps(steps)} select ${check} as "ok"`, params.values)
  }

  /**
   * Forgets what the unit took from the remembered rows, and the rows of `entries`; nothing is
   * left to check. `changed`: because something taken was found changed.
   */
  forget(entries: Iterable<Entry>, changed = false): void {
    const remembered = this.#scope
    if (remembered) {
      if (changed) remembered.noteChanged()
      for (const entry of [...this.#taken.keys(), ...entries]) remembered.forget(entry.entity, entry.key)
      for (const { collection, parentKey } of this.#takenMembers) remembered.forgetMembers(collection, parentKey)
    }
    this.#dropTaken()
  }

  /** Nothing taken is left to check: forgotten, or written and remembered anew. */
  #dropTaken(): void {
    this.#taken.clear()
    this.#takenMembers.length = 0
  }

  /**
   * The members of every parent whose members the unit knows whole, as its write of `rows`
   * leaves them (read before the unit settles, which forgets them): those it loaded or took
   * still pointing to the parent, and those it created or moved there; a new parent's are all
   * in the unit. None when nothing is remembered.
   */
  memberSets(rows: readonly PendingRow[]): MemberSet[] {
    const sets: MemberSet[] = []
    if (!this.remembering) return sets
    const known = this.#internals.members
    const current = (parent: Entry, collection: CollectionProperty, loaded: readonly Entry[]) => {
      const inverse = collection.inverse.name
      const members = new Set([...loaded, ...this.#unit.entriesOf(collection.target)])
      return [...members].filter((e) => !e.removed && e.state !== 'stub' && e.values[inverse] === parent.key).map((e) => e.key)
    }
    for (const [parent, byName] of known) {
      for (const [name, loaded] of byName) {
        const collection = parent.entity.properties.get(name) as CollectionProperty
        sets.push([collection, parent.key, parent.removed ? undefined : current(parent, collection, loaded)])
      }
    }
    for (const { entry, kind } of rows) {
      if (kind !== 'insert' || known.has(entry)) continue
      for (const property of entry.entity.properties.values()) {
        if (property.kind === 'collection') sets.push([property, entry.key, current(entry, property, [])])
      }
    }
    // A member that joined or left a parent whose members the unit did not load (a sumOf moved
    // the parent's sum without them): a set remembered of that parent is no longer whole.
    for (const { entry, kind } of rows) {
      for (const collection of collectionsInto(this.#unit.model, entry.entity)) {
        const inverse = collection.inverse.name
        const now = kind === 'delete' ? undefined : entry.values[inverse]
        const before = kind === 'insert' ? undefined : entry.original?.[inverse]
        if (now === before) continue
        for (const parentKey of [now, before]) {
          if (typeof parentKey !== 'string') continue
          const parent = this.#unit.get(collection.entity, parentKey)
          if (!parent || (parent.state !== 'new' && !known.get(parent)?.has(collection.name))) sets.push([collection, parentKey, undefined])
        }
      }
    }
    return sets
  }

  /**
   * After a write, the rows it wrote as the statement returned them (stored values, new
   * version and xmin), and the member sets it left: the next write takes them as it would
   * have loaded them. What it took and did not write stays remembered as it was.
   */
  rememberWritten(rows: readonly PendingRow[], returned: readonly ReturnedRows[], result: Record<string, unknown>, sets: readonly MemberSet[]): void {
    const remembered = this.#scope
    if (!remembered) return
    for (const { entry, kind } of rows) if (kind === 'delete') remembered.forget(entry.entity, entry.key)
    for (const { entity, column } of returned) {
      for (const row of (result[column] as Record<string, unknown>[] | null) ?? []) {
        const { values, version } = decodeRow(entity, row, this.#internals.cipher)
        remembered.remember(entity, values[KEY] as string, { values: Object.freeze(values), version, xmin: row[XMIN] as string })
      }
    }
    for (const [collection, parentKey, members] of sets) {
      if (members) remembered.rememberMembers(collection, parentKey, members)
      else remembered.forgetMembers(collection, parentKey)
    }
    this.#dropTaken()
  }
}

const collectionIndexes = new WeakMap<Model, Map<EntityModel, CollectionProperty[]>>()

/** The collections `member` is a member of (Order.Lines for OrderLine), indexed once per model. */
function collectionsInto(model: Model, member: EntityModel): readonly CollectionProperty[] {
  let index = collectionIndexes.get(model)
  if (!index) {
    index = new Map()
    for (const entity of model.entities.values()) {
      for (const property of entity.properties.values()) {
        if (property.kind !== 'collection') continue
        let into = index.get(property.target)
        if (!into) index.set(property.target, (into = []))
        into.push(property)
      }
    }
    collectionIndexes.set(model, index)
  }
  return index.get(member) ?? []
}
