// The write path's unit of work: the entities one write loads, creates, changes and removes,
// and the flush that saves them. A flush runs the business rules first, then writes every
// change in ONE statement (a data-modifying WITH: inserts and updates batched per table),
// so a write costs its loads plus one statement, and is atomic without BEGIN/COMMIT.
//
// Concurrency is optimistic: every row updated or deleted must still carry the version it
// was loaded with, and a parent recomputed from its members (an order's total) is always
// written, so two writes feeding it are ordered on its row. A stale version aborts the whole
// statement with SQLSTATE 40001 (isWriteConflict); the session runs the unit again. A sum
// moved by its members' change that no plugin code read is the exception (moveSum): the
// statement adds the change to whatever is stored, and its writers wait for the row lock. Rows
// and members earlier writes loaded or wrote may be taken from what the server remembers
// instead (row-cache.ts; what a unit takes and leaves there: remembered-rows.ts); the flush's
// statement checks them too, with the same outcome.
// A row a computed value reads through a reference (the product of a line's Title) is not
// written: the statement checks its version and xmin (or, on a row it adds a sum to, the
// values read) and holds it (readFrom), and a change
// of it that the rules carry to its readers locks it before they are looked for
// (lockForDependents).
//
// The business rules are the flush's hook (FlushHook): they run before the write, and they
// say what a change will make them read, so loadForChange fetches it with the changed row.
// A unit can also stage: run the hook and settle its changes in memory without writing, again
// and again, each step with its own clock and keys; one flush then writes the net result of
// every step, with the row versions the steps would have left (a workflow rebuilds its state so).
//
//   const unit = new UnitOfWork({ model, sql, rules })
//   const line = await unit.loadForChange(OrderLine, key, ['Quantity'])
//   line.values.Quantity = 7
//   await unit.flush()

import { validationFailed } from '../errors.ts'
import type { CollectionProperty, EntityModel, Model, ReferenceProperty, ScalarProperty } from '../model/model.ts'
import { KEY } from '../model/model.ts'
import type { PropertyCipher } from '../tenancy/property-encryption.ts'
import { columnsOf, decodeRow, selectList, XMIN, type Column } from './entity-columns.ts'
import { naturalKeyTaken } from './database-errors.ts'
import { newGuid } from './guid.ts'
import { RememberedRows } from './remembered-rows.ts'
import type { RowCacheScope } from './row-cache.ts'
import { SqlParameters } from './sql-parameters.ts'
import { quoteIdentifier as quote, type Sql } from './sql.ts'
import { EntityTagKey } from './entity-tag.ts'
import { committedVersion, nextVersion, REMEMBERED_ROW_CHANGED, writeStatement, WRITTEN_XMIN, type PendingRow, type ReadRow } from './write-statement.ts'
import { NO_PLUGIN_LIMITS, type PluginLimits } from '../rules/plugin-call.ts'
import { atScale } from '../rules/values.ts'
import { matches, whereSql, type Where } from './where.ts'

/** One entity of the unit. */
export interface Entry {
  readonly entity: EntityModel
  readonly key: string
  /** Values as rules read them; a reference holds its target's key (or null). */
  values: Record<string, unknown>
  /** The values as loaded; undefined for a new entity and a stub. */
  original: Readonly<Record<string, unknown>> | undefined
  /** The row version as loaded. */
  version: number | undefined
  /** The xmin of the row as loaded or written (as text): with the version, its ETag (entity-tag.ts). */
  xmin?: string
  /** new: created here; loaded: read from the database; stub: known by its key only; gone: removed by a staged step. */
  state: 'new' | 'loaded' | 'stub' | 'gone'
  removed: boolean
}

/**
 * Why an entry the caller did not name is removed: a delete's cascade reached it through
 * `navigation` of `from`, or the method `method` removed it. Refusals name such an entry by
 * this, not by its key, which the caller may have no right to read (rules/system-rules.ts).
 */
export type RemovalCause =
  | { readonly kind: 'cascade'; readonly from: Entry; readonly navigation: string }
  | { readonly kind: 'method'; readonly method: string }

/**
 * Plugin code that set a reference (`method Employee.MoveTo`), and the method's parameter the
 * Guid came from when its caller gave it: a Guid of no entity is then the caller's mistake,
 * otherwise the plugin's bug (rules/apply-rules.ts).
 */
export interface ReferenceSetter {
  readonly what: string
  readonly parameter?: string
}

/** An entity to load, with collections of it and parents of it, in one statement with the others. */
export interface LoadRequest {
  readonly entity: EntityModel
  readonly key: string
  readonly members?: readonly CollectionProperty[]
  /** Parents the write will recompute (rules/dependencies.ts), loaded through the entity's reference. */
  readonly parents?: readonly ParentPrefetch[]
}

/** A parent reached through `reference`, with its `members` (the collection whose inverse that is). */
export interface ParentPrefetch {
  readonly reference: ReferenceProperty
  readonly members: CollectionProperty
  /** Whether its members are loaded too: not when the parent's rules only move sums over them (rules/moved-sums.ts). */
  readonly withMembers: boolean
}

/** A row a flush updates or deletes, with the version it was loaded with. */
export type WrittenRow = readonly [entity: string, key: string, version: number]

/**
 * A row a flush wrote, as data (JSON): what it became, and the version it had. A workflow keeps
 * these so its next request can put its pending rows back in one statement (writeRows).
 */
export interface FlushedRow {
  readonly entity: string
  readonly key: string
  readonly kind: 'insert' | 'update' | 'delete'
  /** The version the row had (updates, deletes). */
  readonly expected?: number
  /**
   * The xmin the row had beside `expected`, when known (entity-tag.ts): a row deleted and
   * created again under its key has the version again, not the xmin. Absent in rows a
   * version of entityctl before it stored.
   */
  readonly expectedXmin?: string
  /** The stored properties written, by declared name (all of them for an insert). */
  readonly values?: Readonly<Record<string, unknown>>
}

/** A row to put as it is, over the version it must still have (none: it must not exist). */
export interface RowToWrite {
  readonly entity: EntityModel
  readonly key: string
  readonly kind: 'insert' | 'update' | 'delete'
  readonly expected?: number
  /** Its version once written. */
  readonly version?: number
  readonly values?: Readonly<Record<string, unknown>>
}

/** What a unit takes from the world: its clock and the keys it generates (a workflow pins both). */
export interface UnitPins {
  readonly now: Date
  newGuid(): string
}

/** What a flush runs before it writes (the business rules), and what that will read. */
export interface FlushHook {
  /** Runs on the unit's pending changes; may change more, or throw to write nothing. */
  beforeWrite(unit: UnitOfWork): Promise<void>
  /** The parents a change of `changing` on `entity` makes the hook recompute (undefined: the entity goes). */
  prefetch(model: Model, entity: EntityModel, changing?: Iterable<string>): readonly ParentPrefetch[]
  /**
   * Whether the hook's checks of the unit's changes hold only under a lock it takes until the
   * write commits (the role tree's: a check that reads rows other writers may be changing),
   * so the flush must run in a transaction.
   */
  needsTransaction(unit: UnitOfWork): boolean
}

export interface UnitOptions {
  readonly model: Model
  readonly sql: Sql
  /** The business rules, run by every flush before anything is written. */
  readonly rules: FlushHook
  readonly cipher?: PropertyCipher
  readonly pins?: UnitPins
  /** Told the rows a flush is about to update or delete (workflows record them). */
  readonly onWrite?: (rows: readonly WrittenRow[], read?: readonly WrittenRow[]) => void
  /** Told every row a flush wrote, values included, once written. */
  readonly onFlush?: (rows: readonly FlushedRow[]) => void
  /**
   * Rows and parents' members earlier writes loaded or wrote (row-cache.ts): a load takes
   * them from there when it finds all it needs, the flush checks they are still stored as
   * remembered, and what the unit loads and writes is remembered in turn. Only for a unit
   * outside a transaction, whose loads see committed rows only.
   */
  readonly remembered?: RowCacheScope
  /** How long the plugin code the unit runs (rules, methods) may keep it waiting (rules/plugin-call.ts); absent: no limit. */
  readonly plugins?: PluginLimits
  /**
   * Each statement of the unit commits on its own (a write outside a transaction): a lock it
   * takes lasts one statement, so a flush whose rules must hold one refuses to run
   * (isTransactionNeeded) and its caller runs the unit again in a transaction.
   */
  readonly autocommit?: boolean
  /**
   * The unit writes for a workflow that has not committed: its rows get pending versions
   * (below zero, write-statement.ts nextVersion), which no row written outside ever has.
   * A unit that stages (a workflow's commit) numbers its steps so too, and its flush writes
   * the versions the rows would have had outside.
   */
  readonly pending?: boolean
  /**
   * A property's name as the API's clients know it (model/naming.ts, ApiOptions:EnableLowerCamelCase),
   * for the targets and messages of validation errors; absent: as declared.
   */
  readonly publicName?: (declared: string) => string
  /** The tenant database's ETag secret, kept while it is open (entity-tag.ts); absent: the unit reads its own. */
  readonly entityTagKey?: EntityTagKey
}

/**
 * A read of one row a flush writes, made by the flush's own statement from the row its write
 * returns, so a write's reply costs no statement of its own (as PostgREST answers a write).
 */
export interface RowReadBack {
  readonly entity: EntityModel
  readonly key: string
  /** The read's SQL, taking the row from `relation` and its values into `params`. */
  sql(relation: string, params: SqlParameters): string
  /** The row the read gave: called once the statement ran, only if the flush wrote the row. */
  take(row: Record<string, unknown>): void
}

const CONFLICT = '40001'

/** Raised by a unit outside a transaction whose rules must hold a lock until the write commits (UnitOfWork.lockForDependents). */
class TransactionNeeded extends Error {}

/** Whether the unit refused to run outside a transaction: run it again in one. */
export function isTransactionNeeded(error: unknown): boolean {
  return error instanceof TransactionNeeded
}

/** The error a flush raises when a row changed since it was loaded: run the unit again. */
export function isWriteConflict(error: unknown): boolean {
  return (error as { code?: string })?.code === CONFLICT
}

/**
 * A conflict over a row the unit took from the rows earlier writes remembered, not over one
 * another writer is changing: running the unit again at once (it loads the row) resolves it.
 */
export function isRememberedRowChanged(error: unknown): boolean {
  return isWriteConflict(error) && (error as Error).message === REMEMBERED_ROW_CHANGED
}

/** What the database holds of an entry a staged step changed: the row the final flush writes over. */
interface StoredRow {
  readonly existed: boolean
  readonly version: number | undefined
  readonly values: Readonly<Record<string, unknown>> | undefined
}

export class UnitOfWork {
  readonly model: Model
  readonly sql: Sql
  readonly #options: UnitOptions
  #pins: UnitPins | undefined
  #now: Date
  /** Every entry by "Entity(key)", in the order the unit met them. */
  readonly #entries = new Map<string, Entry>()
  /**
   * The same entries by entity type and key: find and members look at one type, not at the
   * whole unit, and get() builds no "Entity(key)" string (which made it a W2 write's dearest
   * line of this file).
   */
  readonly #byEntity = new Map<EntityModel, Map<string, Entry>>()
  /** Stored members of collections loaded so far, per parent and navigation. */
  readonly #members = new Map<Entry, Map<string, Entry[]>>()
  readonly #touched = new Set<Entry>()
  /** Sums the rules moved by their members' change (moveSum), per entry: written as that change when no plugin code read them. */
  readonly #movedSums = new Map<Entry, Set<string>>()
  /** Entries written over the version read, whatever the rules moved: touched, or a sum plugin code read (sumRead). */
  readonly #overVersion = new Set<Entry>()
  /** Entries whose every derived value the flush hook computes again (recomputeAll). */
  readonly #recomputed = new Set<Entry>()
  /** Where in the request's body new entries were written (`Lines/1`), for the targets of their errors. */
  readonly #bodyPaths = new WeakMap<Entry, string>()
  /** Why entries the caller did not name are removed (remove()). */
  readonly #removalCauses = new WeakMap<Entry, RemovalCause>()
  /** References plugin code set, with the Guid it set (setReferenceBy). */
  readonly #referenceSetters = new WeakMap<Entry, Map<string, { readonly key: string; readonly setter: ReferenceSetter }>>()
  /** Entries staged steps changed, as the database holds them (stage()). */
  readonly #stored = new Map<Entry, StoredRow>()
  /**
   * Once a unit stages, a step must cost what it changes, not what the unit holds: entries
   * met since the last step (#fresh) and settled ones assigned since (#dirty, told by their
   * values) are the only ones a step looks at.
   */
  #watching = false
  readonly #fresh = new Set<Entry>()
  readonly #dirty = new Set<Entry>()
  /** What the unit took from the rows earlier writes remembered, and what it leaves there (remembered-rows.ts). */
  readonly #remembered: RememberedRows
  /** Stored rows the rules computed values from, with the version and xmin read (readFrom). */
  readonly #readFrom = new Map<Entry, { readonly version: number; readonly xmin: string | undefined; readonly properties: Set<string> }>()
  /** Rows locked for the rules to find what reads them (lockForDependents). */
  readonly #lockedForDependents = new Set<Entry>()

  readonly #tagKey: EntityTagKey

  constructor(options: UnitOptions) {
    this.#options = options
    this.model = options.model
    this.sql = options.sql
    this.#pins = options.pins
    this.#now = options.pins?.now ?? new Date()
    this.#tagKey = options.entityTagKey ?? new EntityTagKey()
    this.#remembered = new RememberedRows(this, options.remembered, {
      fill: (entry, row) => this.#fill(entry, row.values, row.version, row.xmin),
      members: this.#members,
      setMembers: (parent, collection, entries) => this.#setMembers(parent, collection, entries),
      cipher: options.cipher,
    })
  }

  /** How long the unit waits for one call of plugin code (rules/plugin-call.ts). */
  get pluginLimits(): PluginLimits {
    return this.#options.plugins ?? NO_PLUGIN_LIMITS
  }

  /** The secret of the ETags the unit's writes answer and check (entity-tag.ts), read on the unit's connection when not yet known. */
  entityTagSecret(): Promise<string> {
    return this.#tagKey.secret(this.sql)
  }

  /** The clock of the unit's rules. */
  get now(): Date {
    return this.#now
  }

  /** Pins the clock and keys of the next steps (a workflow's stored request, staged again). */
  pin(pins: UnitPins): void {
    this.#pins = pins
    this.#now = pins.now
  }

  get(entity: EntityModel, key: string): Entry | undefined {
    return this.#byEntity.get(entity)?.get(key.toLowerCase())
  }

  /** The entry of `key`, as a stub (known by its key only) when the unit has not met it. */
  reference(entity: EntityModel, key: string): Entry {
    return this.get(entity, key) ?? this.#add({ entity, key: key.toLowerCase(), values: {}, original: undefined, version: undefined, state: 'stub', removed: false })
  }

  create(entity: EntityModel, givenKey = this.newGuid()): Entry {
    const key = givenKey.toLowerCase()
    const existing = this.get(entity, key)
    if (existing && existing.state !== 'stub') return existing
    const entry: Entry = { entity, key, values: { [KEY]: key }, original: undefined, version: undefined, state: 'new', removed: false }
    return this.#add(entry)
  }

  /** Removes `entry`; `cause` says how the caller reached it, when they did not name it. */
  remove(entry: Entry, cause?: RemovalCause): void {
    entry.removed = true
    if (cause) this.#removalCauses.set(entry, cause)
    else this.#removalCauses.delete(entry)
    if (this.#watching) this.#dirty.add(entry)
  }

  /** The row is written (its version checked and raised) even if none of its values changes. */
  touch(entry: Entry): void {
    if (entry.state !== 'loaded') return
    this.#touched.add(entry)
    this.#overVersion.add(entry)
  }

  /**
   * The rules moved the sum `name` of `entry` by what its members changed (rules/moved-sums.ts).
   * Unless plugin code read the sum (sumRead) or the row is touched, the flush adds that change
   * to the stored sum in SQL, without the version read: concurrent writers of its members wait
   * for its row lock instead of losing to each other. Otherwise the row is written as touched.
   */
  moveSum(entry: Entry, name: string): void {
    if (entry.state !== 'loaded') return
    this.#touched.add(entry)
    const names = this.#movedSums.get(entry)
    if (names) names.add(name)
    else this.#movedSums.set(entry, new Set([name]))
  }

  /** Plugin code read a sum of `entry` (rules/entity-view.ts): what it read must be what is stored when the write commits. */
  sumRead(entry: Entry): void {
    if (entry.state === 'loaded') this.#overVersion.add(entry)
  }

  /**
   * The rules computed a value from the stored properties of `entry` (a line's Title from its
   * product's Code) without changing it: the flush's statement checks the row still has the
   * version and xmin read (a key deleted and created again meanwhile is at the version again)
   * and holds it (FOR KEY SHARE) until it commits. A write changing the row waits for this one
   * before it looks for what reads it (lockForDependents), or makes it lose. A row the write
   * adds to a moved sum of (moveSum) is checked instead by the `property` values read, in the
   * update that adds: other writers' sums move its version, not what was read.
   */
  readFrom(entry: Entry, property: string): void {
    if (entry.state !== 'loaded') return
    const read = this.#readFrom.get(entry)
    if (read) read.properties.add(property)
    else this.#readFrom.set(entry, { version: entry.version!, xmin: entry.xmin, properties: new Set([property]) })
  }

  /**
   * Locks the row of `entry`, whose change the rules carry to the entities that read it
   * through a reference (a product's Code to its lines' Title), until the write commits,
   * before they look for those entities: one written meanwhile is found, one written later
   * waits for this write and finds its row changed (readFrom). Found after the lock, in a
   * statement of its own, they are all there. A unit outside a transaction, where a lock
   * lasts one statement, refuses (isTransactionNeeded). FOR UPDATE, the one lock that
   * conflicts with the FOR KEY SHARE of readFrom (and of foreign-key checks).
   */
  async lockForDependents(entry: Entry): Promise<void> {
    if (this.#options.autocommit) throw new TransactionNeeded(`a change of ${entry.entity.name} ${entry.key} that other entities read must run in a transaction`)
    if (this.#lockedForDependents.has(entry)) return
    this.#lockedForDependents.add(entry)
    const params = new SqlParameters()
    await this.sql(`select 1 from ${quote(entry.entity.table)} t where t.${quote(KEY)} = ${params.add(entry.key, 'uuid')} for update`, params.values)
  }

  /**
   * The flush hook computes every value `entry` derives again, whether what it reads changed or
   * not: a PUT replaces the entity, so none of its computed values may outlive it.
   */
  recomputeAll(entry: Entry): void {
    this.#recomputed.add(entry)
    if (this.#watching) this.#dirty.add(entry)
  }

  /** Plugin code `setter` gave `property` of `entry` the Guid it holds now. */
  setReferenceBy(entry: Entry, property: string, setter: ReferenceSetter): void {
    const key = entry.values[property]
    if (typeof key !== 'string') return
    let byProperty = this.#referenceSetters.get(entry)
    if (!byProperty) this.#referenceSetters.set(entry, (byProperty = new Map()))
    byProperty.set(property, { key, setter })
  }

  /** The plugin code that set the Guid `property` of `entry` holds, unless the client set it since. */
  referenceSetter(entry: Entry, property: string): ReferenceSetter | undefined {
    const set = this.#referenceSetters.get(entry)?.get(property)
    return set && set.key === entry.values[property] ? set.setter : undefined
  }

  /** Why `entry` is removed, when the caller did not name it (remove()). */
  removalCause(entry: Entry): RemovalCause | undefined {
    return this.#removalCauses.get(entry)
  }

  recomputesAll(entry: Entry): boolean {
    return this.#recomputed.has(entry)
  }

  /** `entry` came from `path` of the request's body (a deep insert's `Lines/1`): its errors' targets start there. */
  wroteFrom(entry: Entry, path: string): void {
    this.#bodyPaths.set(entry, path)
  }

  /** The target of an error about `property` of `entry`: `Lines/1/Quantity` for a nested new entity, named as clients name it. */
  targetOf(entry: Entry, property: string): string {
    const path = this.#bodyPaths.get(entry)
    const segments = path ? [...path.split('/'), property] : [property]
    return segments.map((segment) => (/^\d+$/.test(segment) ? segment : this.publicName(segment))).join('/')
  }

  /** `property` as the API's clients name it (`Quantity`, or `quantity` in lower camel case). */
  publicName(property: string): string {
    return this.#options.publicName?.(property) ?? property
  }

  /** The entries that may have changed since the last staged step: all of them in a unit that does not stage. */
  pending(): Iterable<Entry> {
    return this.#watching ? new Set([...this.#fresh, ...this.#dirty, ...this.#touched]) : this.#entries.values()
  }

  newGuid(): string {
    return this.#pins?.newGuid() ?? newGuid()
  }

  entries(): Entry[] {
    return [...this.#entries.values()]
  }

  /** The entries of one entity type the unit holds, whatever their state. */
  entriesOf(entity: EntityModel): Iterable<Entry> {
    return this.#entriesOf(entity)
  }

  /** Properties whose value differs from the loaded one (all set ones for a new entity). */
  changes(entry: Entry): string[] {
    if (entry.state === 'new') return Object.keys(entry.values).filter((name) => entry.values[name] !== undefined && entry.values[name] !== null)
    if (entry.state === 'stub' || !entry.original) return Object.keys(entry.values)
    // The common case, and all of a staged unit's settled entries: nothing was assigned since.
    if (unchanged(entry.values, entry.original)) return []
    return columnsOf(entry.entity)
      .map((column) => column.property)
      .filter((name) => name in entry.values && !sameValue(entry.values[name], entry.original![name]))
  }

  /**
   * The entity `key` loaded to be changed (`changing`: the properties a change sets; undefined:
   * it is removed), with what the flush hook will recompute from that change, in one statement.
   * undefined when it does not exist.
   */
  async loadForChange(entity: EntityModel, key: string, changing?: Iterable<string>): Promise<Entry | undefined> {
    const [entry] = await this.load([{ entity, key, parents: this.#options.rules.prefetch(this.model, entity, changing) }])
    return entry.state === 'loaded' && !entry.removed ? entry : undefined
  }

  /** Loads what is not loaded yet, every entity and collection asked for in one statement. */
  async load(requests: readonly LoadRequest[]): Promise<Entry[]> {
    const rowKeys = new Map<EntityModel, string[]>()
    const memberParents = new Map<CollectionProperty, Entry[]>()
    const wanted = (entry: Entry, collection: CollectionProperty) => {
      if (entry.state === 'new' || this.#members.get(entry)?.has(collection.name)) return
      if (this.#remembered.takeMembers(entry, collection)) return
      const parents = memberParents.get(collection) ?? []
      if (!parents.includes(entry)) parents.push(entry)
      memberParents.set(collection, parents)
    }
    const parts: Part[] = []
    for (const request of requests) {
      const entry = this.reference(request.entity, request.key)
      if (entry.state === 'stub') this.#remembered.takeRow(entry, request.parents)
      if (entry.state === 'stub' && !rowKeys.get(request.entity)?.includes(entry.key)) addTo(rowKeys, request.entity, entry.key)
      for (const collection of request.members ?? []) wanted(entry, collection)
      for (const { reference, members, withMembers } of request.parents ?? []) {
        const parentKey = entry.values[reference.name]
        if (entry.state !== 'stub') {
          if (typeof parentKey !== 'string') continue
          const parent = this.reference(members.entity, parentKey)
          if (withMembers) wanted(parent, members)
          else if (parent.state === 'stub' && !rowKeys.get(members.entity)?.includes(parent.key)) addTo(rowKeys, members.entity, parent.key)
          continue
        }
        // The parent's key is in the row being loaded: reach it (and its members) through it.
        const viaChild = (params: SqlParameters, column: string) =>
          `${column} = (select s.${quote(reference.column)} from ${quote(request.entity.table)} s where ${keyIn(params, `s.${quote(KEY)}`, [entry.key])})`
        parts.push({ entity: members.entity, sql: (p) => selectWhere(members.entity, viaChild(p, `t.${quote(KEY)}`)) })
        if (!withMembers) continue
        parts.push({
          entity: members.target,
          sql: (p) => selectWhere(members.target, viaChild(p, `t.${quote(reference.column)}`)),
          collection: members,
          parentKeys: () => {
            const key = entry.values[reference.name]
            return typeof key === 'string' ? [key] : []
          },
        })
      }
    }
    for (const [entity, keys] of rowKeys) {
      parts.unshift({ entity, sql: (p) => selectWhere(entity, keyIn(p, `t.${quote(KEY)}`, keys)) })
    }
    for (const [collection, parents] of memberParents) {
      parts.push({
        entity: collection.target,
        sql: (p) => selectWhere(collection.target, keyIn(p, `t.${quote(collection.inverse.column)}`, parents.map((e) => e.key))),
        collection,
        parentKeys: () => parents.map((e) => e.key),
      })
    }
    if (parts.length > 0) await this.#run(parts)
    return requests.map((request) => this.get(request.entity, request.key)!)
  }

  /**
   * Locks `rows` until the transaction around the unit ends (FOR UPDATE), and the rows its
   * rules `read` values from (FOR KEY SHARE: readFrom), before anything is loaded: a writer that
   * keeps losing them to other writers takes them instead (session.ts). Table by table and
   * key by key in one order, the same for every writer, so that two writers locking
   * overlapping rows queue instead of deadlocking.
   */
  async lock(rows: readonly WrittenRow[], read: readonly WrittenRow[] = []): Promise<void> {
    const keys = new Map<string, string[]>()
    for (const [entity, key] of rows) addTo(keys, entity, key)
    const shared = new Map<string, string[]>()
    for (const [entity, key] of read) if (!keys.get(entity)?.includes(key)) addTo(shared, entity, key)
    for (const name of [...new Set([...keys.keys(), ...shared.keys()])].sort()) {
      const table = quote(this.model.entities.get(name)!.table)
      const key = `t.${quote(KEY)}`
      for (const [locked, mode] of [[keys, 'update'], [shared, 'key share']] as const) {
        const wanted = locked.get(name)
        if (!wanted) continue
        const params = new SqlParameters()
        await this.sql(`select 1 from ${table} t where ${keyIn(params, key, [...new Set(wanted)].sort())} order by ${key} for ${mode}`, params.values)
      }
    }
  }

  /** Entities matching `where`: the stored ones as this unit sees them, and its own new ones. */
  async find(entity: EntityModel, where: Where = {}): Promise<Entry[]> {
    const found = await this.#run([{ entity, sql: (params) => selectWhere(entity, whereSql(entity, where, 't', params)) }])
    const candidates = new Set([...found, ...this.#entriesOf(entity)])
    return [...candidates].filter((e) => !e.removed && e.state !== 'stub' && matches(entity, where, e.values)).sort(byKey)
  }

  /** The current members of a parent's collection: stored ones still there, and ones this unit added or moved in. */
  async members(parent: Entry, collection: CollectionProperty): Promise<Entry[]> {
    if (parent.state !== 'new' && !this.#members.get(parent)?.has(collection.name)) {
      await this.load([{ entity: parent.entity, key: parent.key, members: [collection] }])
    }
    const inverse = collection.inverse.name
    const candidates = new Set([...(this.#members.get(parent)?.get(collection.name) ?? []), ...this.#entriesOf(collection.target)])
    return [...candidates].filter((e) => !e.removed && e.state !== 'stub' && e.values[inverse] === parent.key).sort(byKey)
  }

  /**
   * Runs the rules, then writes every change in one statement (after staged steps: their net
   * result). `readBack`: a read of a row the statement writes, made by the same statement; it
   * is not made when the row is not written (nothing changed it), so its caller reads it then.
   */
  async flush(readBack?: RowReadBack): Promise<void> {
    if (this.#stored.size > 0) {
      await this.stage()
      const statement = this.#netStatement()
      if (statement) await this.#write(statement.text, statement.params)
      return
    }
    await this.#beforeWrite()
    const rows = this.#pendingRows()
    if (rows.length === 0) return this.checkRemembered()
    const statement = writeStatement(rows, this.#options.cipher, this.#options.pending ? 'pending' : 'raised', readBack, this.#remembered.checkedBy(rows), this.#readRows())
    this.#options.onWrite?.(statement.written, statement.read)
    let result: Record<string, unknown> | undefined
    try {
      ;[result] = await this.#write(statement.text, statement.params)
    } catch (error) {
      if (!isWriteConflict(error)) throw error
      // A taken row the statement writes is checked by its own step, not by the remembered-row
      // check: its conflict is a remembered row found changed all the same (run again at once).
      const tookWritten = rows.some((row) => this.#remembered.wasTaken(row.entry))
      // The rows it took are remembered no more, nor are those it set out to write.
      this.#remembered.forget(rows.map((row) => row.entry), tookWritten || isRememberedRowChanged(error))
      throw tookWritten ? Object.assign(new Error(REMEMBERED_ROW_CHANGED, { cause: error }), { code: CONFLICT }) : error
    }
    if (statement.readsBack) readBack!.take(result!)
    this.#options.onFlush?.(rows.map(flushedRow))
    // Read before #settle, which forgets the members the unit knows.
    const memberSets = this.#remembered.memberSets(rows)
    this.#settle(rows, result![WRITTEN_XMIN] as string | undefined)
    this.#remembered.rememberWritten(rows, statement.returned, result!, memberSets)
  }

  /** Runs a statement that writes rows; a natural key another row has is 409 naming its properties as clients do. */
  async #write(text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
    try {
      return await this.sql(text, params)
    } catch (error) {
      throw naturalKeyTaken(error, (name) => this.publicName(name)) ?? error
    }
  }

  /**
   * Checks that the rows this unit took from the remembered ones are still stored as they were
   * remembered; otherwise forgets them and fails as a conflict (isRememberedRowChanged), so
   * the unit runs again and loads them. A flush that writes checks in its own statement; this
   * is for a unit that writes nothing, or whose rules refused the write on what it took.
   */
  async checkRemembered(): Promise<void> {
    try {
      await this.#remembered.check(this.sql)
    } catch (error) {
      if (isWriteConflict(error)) this.#remembered.forget([], true)
      throw error
    }
  }

  /** Whether the flush must run in a transaction, for the rules' lock to last until the write commits (FlushHook). */
  get needsTransaction(): boolean {
    return this.#options.rules.needsTransaction(this)
  }

  /** Whether this unit took rows from the remembered ones (its answer then rests on them). */
  get tookRemembered(): boolean {
    return this.#remembered.took
  }

  /**
   * Writes rows as given, in one statement, each over the version it must still have: how a
   * workflow puts back the rows its earlier requests wrote. No rule runs: they ran when the
   * rows were first written.
   */
  async writeRows(rows: readonly RowToWrite[]): Promise<void> {
    if (rows.length === 0) return
    const pending = rows.map((row): PendingRow => {
      const entry: Entry = { entity: row.entity, key: row.key, values: { ...row.values }, original: undefined, version: row.version, state: 'loaded', removed: false }
      const columns = row.kind === 'insert' ? columnsOf(row.entity) : columnsOf(row.entity).filter((c) => row.values && c.property in row.values)
      return { entry, kind: row.kind, columns, expected: row.expected, next: row.version }
    })
    const statement = writeStatement(pending, this.#options.cipher, 'net')
    await this.#write(statement.text, statement.params)
  }

  /**
   * Runs the rules on the changes since the last step and settles them in memory, as a flush
   * would once written, without writing: later steps see them as stored. Reports the rows the
   * step would write to onWrite, with the versions it would find; numbers them as a
   * workflow's pending rows (nextVersion), since only a workflow's commit stages.
   */
  async stage(): Promise<void> {
    await this.#beforeWrite()
    const pending = [...this.pending()]
    const written = this.#pendingRows(pending)
    this.#options.onWrite?.(written.filter((row) => row.kind !== 'insert').map((row) => [row.entry.entity.name, row.entry.key, row.expected!] as const))
    for (const { entry } of written) {
      if (!this.#stored.has(entry)) this.#stored.set(entry, { existed: entry.state === 'loaded', version: entry.version, values: entry.original })
      if (entry.removed) {
        if (entry.state === 'new') this.#forget(entry)
        entry.state = 'gone'
        continue
      }
      // Numbered as the workflow's requests numbered them, so their versions compare.
      entry.version = nextVersion(entry.state === 'new' ? undefined : entry.version, true)
      entry.xmin = undefined
      entry.original = { ...entry.values }
      entry.state = 'loaded'
    }
    for (const entry of pending) if (entry.removed && entry.state === 'new') this.#forget(entry)
    // The stored members stay valid: nothing was written.
    this.#touched.clear()
    this.#movedSums.clear()
    this.#overVersion.clear()
    this.#recomputed.clear()
    this.#fresh.clear()
    this.#dirty.clear()
    this.#watching = true
    for (const entry of pending) entry.values = this.#watched(entry, entry.values)
  }

  /** Values that tell the unit when they are assigned, so the next step looks at their entry. */
  #watched(entry: Entry, values: Record<string, unknown>): Record<string, unknown> {
    const dirty = this.#dirty
    return new Proxy(
      { ...values },
      {
        set(target, name, value) {
          target[name as string] = value
          dirty.add(entry)
          return true
        },
        deleteProperty(target, name) {
          delete target[name as string]
          dirty.add(entry)
          return true
        },
      },
    )
  }

  async #beforeWrite(): Promise<void> {
    // Entities changed by key only (members bound to a new parent) are loaded first, so their
    // change is a change like any other; one that does not exist is the client's mistake.
    const assignedStubs = [...this.pending()].filter((e) => e.state === 'stub' && Object.keys(e.values).length > 0)
    if (assignedStubs.length > 0) {
      await this.load(assignedStubs.map((e) => ({ entity: e.entity, key: e.key })))
      const missing = assignedStubs.filter((e) => e.state === 'stub')
      if (missing.length > 0) {
        throw validationFailed(missing.map((e) => ({ code: 'ValidationFailed', target: e.entity.setName, message: `No ${e.entity.name} has the Guid ${e.key}.` })))
      }
    }
    await this.#options.rules.beforeWrite(this)
  }

  #add(entry: Entry): Entry {
    this.#entries.set(identity(entry.entity, entry.key), entry)
    const ofEntity = this.#byEntity.get(entry.entity)
    if (ofEntity) ofEntity.set(entry.key, entry)
    else this.#byEntity.set(entry.entity, new Map([[entry.key, entry]]))
    if (this.#watching) this.#fresh.add(entry)
    return entry
  }

  #forget(entry: Entry): void {
    this.#entries.delete(identity(entry.entity, entry.key))
    this.#byEntity.get(entry.entity)?.delete(entry.key)
  }

  #entriesOf(entity: EntityModel): Iterable<Entry> {
    return this.#byEntity.get(entity)?.values() ?? []
  }

  /** Runs a load of one or more parts as one statement; registers what it finds, returns its entries in order. */
  async #run(parts: readonly Part[]): Promise<Entry[]> {
    const params = new SqlParameters()
    const text = parts.map((part, i) => `select ${i} as "part", to_json(r) as "row" from (${part.sql(params)}) r`).join('\nunion all\n')
    const rows = await this.sql<{ part: number; row: Record<string, unknown> }>(text, params.values)
    const found: Entry[] = []
    const members = new Map<Part, Map<string, Entry[]>>()
    for (const { part: index, row } of rows) {
      const part = parts[index]
      const entry = this.#register(part.entity, row)
      found.push(entry)
      if (part.collection) {
        const byParent = members.get(part) ?? new Map<string, Entry[]>()
        addTo(byParent, row[part.collection.inverse.column] as string, entry)
        members.set(part, byParent)
      }
    }
    for (const part of parts) {
      if (!part.collection) continue
      for (const parentKey of part.parentKeys!()) {
        const parent = this.reference(part.collection.entity, parentKey)
        const found = members.get(part)?.get(parentKey) ?? []
        this.#setMembers(parent, part.collection, found)
        this.#remembered.rememberLoadedMembers(part.collection, parentKey, found.map((entry) => entry.key))
      }
    }
    return found
  }

  /** A loaded row joins the unit; what the unit already holds of it wins (its changes stay). */
  #register(entity: EntityModel, row: Record<string, unknown>): Entry {
    const { values, version } = decodeRow(entity, row, this.#options.cipher)
    const key = values[KEY] as string
    // Shared with the remembered rows from here on: replaced, never changed.
    Object.freeze(values)
    this.#remembered.rememberLoaded(entity, key, { values, version, xmin: row[XMIN] as string })
    const entry = this.get(entity, key)
    if (entry && entry.state !== 'stub') return entry
    const xmin = row[XMIN] as string
    if (entry) {
      this.#fill(entry, values, version, xmin)
      return entry
    }
    return this.#add({ entity, key, values: { ...values }, original: values, version, xmin, state: 'loaded', removed: false })
  }

  /** A stub becomes the stored row; values the unit assigned to it stay. */
  #fill(entry: Entry, values: Readonly<Record<string, unknown>>, version: number, xmin: string): void {
    if (this.#watching) this.#fresh.add(entry)
    entry.values = { ...values, ...entry.values }
    entry.original = values
    entry.version = version
    entry.xmin = xmin
    entry.state = 'loaded'
  }

  /** `entries` are all the stored members of `collection` of `parent` (loaded, or taken from the remembered ones). */
  #setMembers(parent: Entry, collection: CollectionProperty, entries: Entry[]): void {
    let byName = this.#members.get(parent)
    if (!byName) this.#members.set(parent, (byName = new Map()))
    byName.set(collection.name, entries)
  }

  /** The rows the pending changes write: new entities, changed (or touched) loaded ones, removed ones. */
  #pendingRows(candidates: Iterable<Entry> = this.pending()): PendingRow[] {
    const rows: PendingRow[] = []
    for (const entry of candidates) {
      if (entry.state === 'new' && !entry.removed) rows.push({ entry, kind: 'insert', columns: columnsOf(entry.entity) })
      if (entry.state !== 'loaded') continue
      if (entry.removed) {
        rows.push({ entry, kind: 'delete', expected: entry.version, expectedXmin: entry.xmin })
        continue
      }
      const changed = new Set(this.changes(entry))
      if (changed.size === 0 && !this.#touched.has(entry)) continue
      const columns = columnsOf(entry.entity).filter((c) => changed.has(c.property))
      const added = this.#addedInSql(entry, columns)
      if (added?.increments.size === 0) continue
      rows.push({ entry, kind: 'update', expected: entry.version, expectedXmin: entry.xmin, columns, ...added })
    }
    return rows
  }

  /**
   * How the flush writes `entry` when it changes only sums the rules moved (moveSum), none of
   * them read by plugin code, the row not touched, outside a workflow (whose steps number
   * versions of their own): it adds each column's change (`increments`, by column property;
   * none: nothing to write) and checks by value the columns the rules read of it (`stillRead`,
   * readFrom). undefined: the row is written over the version read.
   */
  #addedInSql(entry: Entry, columns: readonly Column[]): { increments: Map<string, number>; stillRead: Column[] } | undefined {
    const moved = this.#movedSums.get(entry)
    if (!moved || this.#overVersion.has(entry) || this.#options.pending || this.#watching) return undefined
    if (!columns.every((column) => moved.has(column.property))) return undefined
    const stillRead: Column[] = []
    for (const property of [...(this.#readFrom.get(entry)?.properties ?? [])].sort()) {
      // Compared by value in SQL: a stored column, not encrypted.
      const column = columnsOf(entry.entity).find((c) => c.property === property && !c.encrypted)
      if (!column) return undefined
      stillRead.push(column)
    }
    const increments = new Map<string, number>()
    for (const column of columns) {
      const property = entry.entity.properties.get(column.property) as ScalarProperty
      const change = Number(entry.values[column.property]) - Number(entry.original![column.property])
      // The change of two-decimal sums, as exact as they are (14.85 → 19.8 is 4.95, not 4.950000000000001).
      increments.set(column.property, property.type === 'Decimal' ? atScale(property.decl, change) : change)
    }
    return { increments, stillRead }
  }

  /**
   * After staged steps: the statement that takes the database from the rows as they were
   * loaded to the rows the last step left, each row at the version the steps would have
   * given it outside a workflow (committedVersion: the steps number them as pending ones).
   */
  #netStatement(): { text: string; params: unknown[] } | undefined {
    const rows: PendingRow[] = []
    for (const [entry, stored] of this.#stored) {
      if (!stored.existed) {
        if (entry.state !== 'gone') rows.push({ entry, kind: 'insert', columns: columnsOf(entry.entity), next: committedVersion(entry.version!) })
        continue
      }
      if (entry.state === 'gone') {
        rows.push({ entry, kind: 'delete', expected: stored.version })
        continue
      }
      if (entry.version === stored.version) continue
      const columns = columnsOf(entry.entity).filter((c) => !sameValue(entry.values[c.property], stored.values?.[c.property]))
      rows.push({ entry, kind: 'update', expected: stored.version, next: committedVersion(entry.version!), columns })
    }
    return rows.length === 0 ? undefined : writeStatement(rows, this.#options.cipher, 'net', undefined, undefined, this.#readRows())
  }

  /** The rows the rules read values from (readFrom) that are still stored as read: not changed by a staged step, not removed. */
  #readRows(): ReadRow[] {
    const rows: ReadRow[] = []
    for (const [entry, { version, xmin }] of this.#readFrom) {
      if (entry.state === 'loaded' && !entry.removed && !this.#stored.has(entry)) rows.push({ entity: entry.entity, key: entry.key, version, xmin })
    }
    return rows
  }

  /**
   * After a successful write the unit holds what is stored: the rows `written` as the statement
   * left them, by the transaction `xmin`. A sum moved in SQL holds what other writers added
   * too: its entry is forgotten, and loaded again if asked for.
   */
  #settle(written: readonly PendingRow[], xmin: string | undefined): void {
    for (const { entry, increments } of written) {
      if (entry.removed || increments) {
        this.#forget(entry)
        continue
      }
      entry.version = nextVersion(entry.state === 'new' ? undefined : entry.version, this.#options.pending === true)
      entry.xmin = xmin
      entry.original = { ...entry.values }
      entry.state = 'loaded'
    }
    // Created and then removed in the same unit: never stored, gone all the same.
    for (const entry of this.entries()) if (entry.removed && entry.state === 'new') this.#forget(entry)
    this.#touched.clear()
    this.#movedSums.clear()
    this.#overVersion.clear()
    this.#recomputed.clear()
    this.#members.clear()
    this.#readFrom.clear()
  }
}

function flushedRow(row: PendingRow): FlushedRow {
  const values = row.columns && Object.fromEntries(row.columns.map((c) => [c.property, row.entry.values[c.property] ?? null]))
  return {
    entity: row.entry.entity.name,
    key: row.entry.key,
    kind: row.kind,
    ...(row.expected !== undefined ? { expected: row.expected } : {}),
    ...(row.expectedXmin !== undefined ? { expectedXmin: row.expectedXmin } : {}),
    ...(values ? { values } : {}),
  }
}

/** The entity's columns (and version) from its table `t`, where `condition` holds. */
function selectWhere(entity: EntityModel, condition: string): string {
  return `select ${selectList(entity, 't')}, t.xmin as ${quote(XMIN)} from ${quote(entity.table)} t where ${condition}`
}

/**
 * `column = $1` for one key, `column = any($1)` for several: with generic plans, PostgreSQL
 * plans an array of unknown length as ten rows (a bitmap scan), one key as a plain index scan.
 */
function keyIn(params: SqlParameters, column: string, keys: readonly string[]): string {
  return keys.length === 1 ? `${column} = ${params.add(keys[0], 'uuid')}` : `${column} = any(${params.add([...keys], 'uuid[]')})`
}

interface Part {
  readonly entity: EntityModel
  /** The part's SELECT, its values collected in the statement's `params` (shared by every part). */
  readonly sql: (params: SqlParameters) => string
  /** Set on a part loading members: the collection, and (once loaded) the keys of the parents asked for. */
  readonly collection?: CollectionProperty
  readonly parentKeys?: () => string[]
}

function identity(entity: EntityModel, key: string): string {
  return `${entity.name}(${key})`
}

function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

function byKey(a: Entry, b: Entry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0
}

/** Whether every value is the very one loaded (or settled): a cheap test before comparing values. */
function unchanged(values: Readonly<Record<string, unknown>>, original: Readonly<Record<string, unknown>>): boolean {
  for (const name in values) if (values[name] !== original[name]) return false
  return true
}

/**
 * Whether a value is unchanged. A number meets a numeric string numerically ('12.30' and
 * 12.3); two strings compare as written, so a text changing from '1.0' to '1' is a change.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  const x = a instanceof Date ? a.toISOString() : (a ?? null)
  const y = b instanceof Date ? b.toISOString() : (b ?? null)
  if (typeof x === 'number' || typeof y === 'number') return x !== null && y !== null && Number(x) === Number(y)
  return x === y
}
