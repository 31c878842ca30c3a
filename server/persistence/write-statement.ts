// The one statement a flush writes (persistence/unit-of-work.ts): every insert, update and
// delete as a step of a data-modifying WITH, batched per table, then a final SELECT that
// checks the rows updated or deleted still had the version and xmin they were loaded with
// (the xmin: a key deleted and created again meanwhile is at the version again), that the
// rows the rules only read values from still have theirs (held until it commits), and that
// what the unit took from the remembered rows (row-cache.ts) is still stored so. A failed
// check raises SQLSTATE 40001 through `_conflict`, and nothing of the statement stays. A step
// returns the xmin of each row it wrote (a delete: 1 a row), or the rows it wrote with their
// xmin: for the reply to read one (RowReadBack), or when the unit remembers what it writes;
// the SELECT then carries them too, and the xmin the written rows got (their new ETag).
// A sum moved by its members' change is added to whatever is stored, over no version
// (PendingRow.increments): its writers wait for each other's row lock instead.
//
//   with "w0" as (update "OrderLine" t set "Quantity" = v."Quantity", … from (values ($1, $2, $3, $4)) as v(…)
//                 where t."Guid" = v."Guid" and t."_Version" = v."_Version" and (v."_xmin" is null or t.xmin = v."_xmin")
//                 returning t.xmin as "xmin"),
//        "w1" as (update "Order" t set "Total" = t."Total" + v."Total", … where t."Guid" = v."Guid" and t."Total" is not null
//                 returning t.xmin as "xmin")
//   select case when (select count(*) from "w0") + (select count(*) from "w1") = $7 then 0
//               else "_conflict"('a row changed since it was read') end as "ok",
//          (select "xmin" from "w0" limit 1) as "_written_xmin"

import type { CollectionProperty, EntityModel } from '../model/model.ts'
import { KEY, VERSION_COLUMN } from '../model/model.ts'
import type { PropertyCipher } from '../tenancy/property-encryption.ts'
import { columnsOf, encodeValue, XMIN, type Column } from './entity-columns.ts'
import { rememberable, type RememberedRow } from './row-cache.ts'
import { SqlParameters } from './sql-parameters.ts'
import { quoteIdentifier as quote } from './sql.ts'
import type { Entry, RowReadBack, WrittenRow } from './unit-of-work.ts'

/** The column of a write statement's result holding the xmin of the rows it inserted and updated (as text). */
export const WRITTEN_XMIN = '_written_xmin'

/** The message of the conflict a remembered row found changed raises (unit-of-work.ts isRememberedRowChanged). */
export const REMEMBERED_ROW_CHANGED = 'a remembered row changed since it was remembered'

/** A row a flush writes: the version it must still have (update, delete) and, after staged steps, the one it gets. */
export interface PendingRow {
  readonly entry: Entry
  readonly kind: 'insert' | 'update' | 'delete'
  readonly columns?: readonly Column[]
  readonly expected?: number
  /**
   * The xmin it must still have beside `expected` (update, delete), when known: the version
   * alone is met again by a row deleted and created again under the same key since the load.
   */
  readonly expectedXmin?: string
  /** Set by a net write: the version the steps left (otherwise 1 for an insert, one more for an update). */
  readonly next?: number
  /**
   * Set on an update that adds these changes to the stored values (by column property), over
   * whatever version the row has by then: sums no plugin code read (UnitOfWork.moveSum).
   */
  readonly increments?: ReadonlyMap<string, number>
  /**
   * With `increments`: columns the rules read from the row (UnitOfWork.readFrom), which must
   * still hold the values loaded; the update holds the row until it commits.
   */
  readonly stillRead?: readonly Column[]
}

/**
 * How a write numbers the rows it writes: `raised`, one more than found (1 for a new row);
 * `pending`, the same for a row a workflow wrote and has not committed, negated (nextVersion);
 * `net`, each row's `next` (staged steps, a workflow's rows put back).
 */
export type Versioning = 'raised' | 'pending' | 'net'

/**
 * The version a write gives a row that had `version` (undefined: a new row). A workflow's
 * pending rows count below zero (-1, -2, …: minus the version the row would have), so no
 * ETag seen inside a workflow is ever the ETag of a row written outside it, whose versions
 * count up from 1: an If-Match sent with one outside is 412, never a match with other content.
 */
export function nextVersion(version: number | undefined, pending: boolean): number {
  const next = version === undefined ? 1 : Math.abs(version) + 1
  return pending ? -next : next
}

/** The version a workflow's pending row has once committed: the one it would have had outside. */
export function committedVersion(version: number): number {
  return Math.abs(version)
}

/**
 * One statement for `rows`: inserts, updates and deletes batched per table (rowSource: a
 * VALUES list or arrays), and a final check that every updated or deleted row still had its
 * version and xmin, as every row of `readFrom` the statement does not write; otherwise `_conflict`
 * raises and nothing of the statement stays. `versioning` says what versions it writes.
 */
export function writeStatement(
  rows: readonly PendingRow[],
  cipher: PropertyCipher | undefined,
  versioning: Versioning,
  readBack?: RowReadBack,
  remembered?: Taken & { readonly returnWritten: boolean },
  readFrom: readonly ReadRow[] = [],
): { text: string; params: unknown[]; written: WrittenRow[]; read: WrittenRow[]; readsBack: boolean; returned: ReturnedRows[] } {
  const params = new SqlParameters()
  const steps: string[] = []
  // The step that writes the row to read back returns it whole, as do all of them when the
  // rows written are to be remembered (with their xmin); otherwise they return 1 a row.
  const readRow = readBack && rows.find((r) => r.kind !== 'delete' && r.entry.entity === readBack.entity && r.entry.key === readBack.key)
  let readRelation: string | undefined
  const returned: ReturnedRows[] = []
  // Every row a statement inserts or updates gets one xmin, its (sub)transaction's, the
  // written rows' new ETag with their versions (entity-tag.ts): the first such step's is
  // the statement's WRITTEN_XMIN.
  let writtenXminStep: string | undefined
  const returning = (inserted: readonly PendingRow[], row: '*' | 't.*') => {
    const reads = readRow !== undefined && inserted.includes(readRow)
    if (reads) readRelation = `"w${steps.length}"`
    writtenXminStep ??= `"w${steps.length}"`
    const entity = inserted[0].entry.entity
    const xmin = `${row === '*' ? '' : 't.'}xmin as ${quote(XMIN)}`
    const remembers = remembered?.returnWritten === true && rememberable(entity)
    if (remembers) returned.push({ entity, column: `_w${steps.length}` })
    return remembers || reads ? `returning ${row}, ${xmin}` : `returning ${xmin}`
  }
  const byKind = Map.groupBy(rows, (row) => row.kind)
  const inserts = Map.groupBy(byKind.get('insert') ?? [], (row) => row.entry.entity)
  // Updates of one table that set (or add to) the same columns share a step. Rows are updated
  // and deleted table by table in name order and key by key, the order a writer that keeps
  // losing locks them in (UnitOfWork.lock): in any other, it and the writers it waits for held
  // what the other wanted, and PostgreSQL took a second (deadlock_timeout) to tell them.
  const inLockOrder = (kind: PendingRow['kind']) => [...(byKind.get(kind) ?? [])].sort(byTableAndKey)
  const updates = Map.groupBy(
    inLockOrder('update'),
    (row) => `${row.entry.entity.name}:${row.increments ? '+' : ''}${row.columns!.map((c) => c.column).join(',')}:${(row.stillRead ?? []).map((c) => c.column).join(',')}`,
  )
  const deletes = Map.groupBy(inLockOrder('delete'), (row) => row.entry.entity)
  const checked: string[] = []
  const written: WrittenRow[] = []
  const key: RowColumn = { name: KEY, type: 'uuid', value: (r) => r.entry.key }
  const expected: RowColumn = { name: VERSION_COLUMN, type: 'int', value: (r) => r.expected }
  const expectedXmin: RowColumn = { name: '_xmin', type: 'xid', value: (r) => r.expectedXmin ?? null }
  const same = `t.${quote(KEY)} = v.${quote(KEY)} and t.${quote(VERSION_COLUMN)} = v.${quote(VERSION_COLUMN)} and (v."_xmin" is null or t.xmin = v."_xmin")`
  const next: RowColumn = { name: '_next', type: 'int', value: (r) => r.next }
  const stored = (c: Column): RowColumn => ({ name: c.column, type: c.sqlType, value: (r) => encodeValue(c, r.entry.values[c.property], cipher) })
  const increment = (c: Column): RowColumn => ({ name: c.column, type: c.sqlType, value: (r) => r.increments!.get(c.property) })
  const readValue = (c: Column): RowColumn => ({ name: `${c.column}${READ_SUFFIX}`, type: c.sqlType, value: (r) => encodeValue(c, r.entry.original?.[c.property], cipher) })
  const net = versioning === 'net'
  for (const [entity, inserted] of inserts) {
    const columns = columnsOf(entity)
    const names = [...columns.map((c) => quote(c.column)), quote(VERSION_COLUMN)].join(', ')
    steps.push(
      net
        ? `insert into ${quote(entity.table)} (${names}) select v.* from ${rowSource(params, inserted, [...columns.map(stored), next])} ${returning(inserted, '*')}`
        : `insert into ${quote(entity.table)} (${names}) select v.*, ${nextVersion(undefined, versioning === 'pending')} from ${rowSource(params, inserted, columns.map(stored))} ${returning(inserted, '*')}`,
    )
  }
  for (const updated of updates.values()) {
    const { entity } = updated[0].entry
    const columns = updated[0].columns!
    // In SQL, as nextVersion says.
    const raised = versioning === 'pending' ? `-(abs(t.${quote(VERSION_COLUMN)}) + 1)` : `t.${quote(VERSION_COLUMN)} + 1`
    const version = net ? `v.${quote('_next')}` : raised
    checked.push(`"w${steps.length}"`)
    if (updated[0].increments) {
      // Sums moved by their members' change: the row lock orders concurrent writers, and each
      // adds its own. A sum stored empty (a row older than its rule) is no sum to move: the
      // row counts as changed, and the unit runs again to add up the members.
      const assignments = [...columns.map((c) => `${quote(c.column)} = t.${quote(c.column)} + v.${quote(c.column)}`), `${quote(VERSION_COLUMN)} = ${raised}`]
      const stored = columns.map((c) => ` and t.${quote(c.column)} is not null`).join('')
      const read = updated[0].stillRead ?? []
      const asRead = read.map((c) => ` and t.${quote(c.column)} is not distinct from v.${quote(`${c.column}${READ_SUFFIX}`)}`).join('')
      steps.push(`update ${quote(entity.table)} t set ${assignments.join(', ')}
        from ${rowSource(params, updated, [key, ...columns.map(increment), ...read.map(readValue)])}
        where t.${quote(KEY)} = v.${quote(KEY)}${stored}${asRead} ${returning(updated, 't.*')}`)
    } else {
      const assignments = [...columns.map((c) => `${quote(c.column)} = v.${quote(c.column)}`), `${quote(VERSION_COLUMN)} = ${version}`]
      steps.push(`update ${quote(entity.table)} t set ${assignments.join(', ')}
        from ${rowSource(params, updated, [key, expected, expectedXmin, ...(net ? [next] : []), ...columns.map(stored)])}
        where ${same} ${returning(updated, 't.*')}`)
    }
    for (const r of updated) written.push([entity.name, r.entry.key, r.expected!])
  }
  for (const [entity, deleted] of deletes) {
    checked.push(`"w${steps.length}"`)
    steps.push(`delete from ${quote(entity.table)} t using ${rowSource(params, deleted, [key, expected, expectedXmin])}
        where ${same} returning 1`)
    for (const r of deleted) written.push([entity.name, r.entry.key, r.expected!])
  }
  // Rows the rules computed values from without writing them (a line's Title from its
  // product's Code): still at the version and xmin read (as a written row is: a product
  // deleted and created again under its key is at the version again, with other values; an
  // xmin not known is not compared), and held until the statement commits, so a write
  // changing one of them (UnitOfWork.lockForDependents) waits for this one. FOR KEY SHARE,
  // the lock a foreign key's check takes: a line written or moved holds its product so
  // already, and concurrent writers of lines share it without PostgreSQL recording a
  // second, stronger lock of each on the row (a new multixact). One the change holds
  // already makes this one lose at once (SKIP LOCKED): waiting for it here, while other
  // steps hold rows (the order), let writers of lines deadlock each other.
  const held = readFrom.filter((read) => !written.some(([entity, key]) => entity === read.entity.name && key === read.key))
  for (const [entity, reads] of Map.groupBy(held, (read) => read.entity)) {
    const values = reads.map((read) => `(${params.add(read.key, 'uuid')}, ${params.add(read.version, 'int')}, ${params.add(read.xmin ?? null, 'xid')})`)
    checked.push(`"w${steps.length}"`)
    steps.push(`select 1 from ${quote(entity.table)} t join (values ${values.join(', ')}) as v(k, version, xmin)
        on t.${quote(KEY)} = v.k and t.${quote(VERSION_COLUMN)} = v.version and (v.xmin is null or t.xmin = v.xmin) for key share of t skip locked`)
  }
  let check = `case when ${countOf(checked)} = ${params.add(written.length + held.length, 'int')} then 0 else "_conflict"('a row changed since it was read') end`
  if (remembered && takenCount(remembered) > 0) check = rememberedCheck(params, remembered, steps, check)
  const columns = [
    `${check} as "ok"`,
    ...(writtenXminStep ? [`(select ${quote(XMIN)} from ${writtenXminStep} limit 1) as ${quote(WRITTEN_XMIN)}`] : []),
    ...returned.map(({ column }) => `(select json_agg(w) from "${column.slice(1)}" w) as "${column}"`),
  ].join(', ')
  // The read joins the check's one row, so the check runs whatever the read finds.
  const select = readRelation ? `select ${columns}, r.* from (select) one left join lateral (${readBack!.sql(readRelation, params)}) r on true` : `select ${columns}`
  const text = `${withSteps(steps)}
      ${select}`
  const read = held.map((row): WrittenRow => [row.entity.name, row.key, row.version])
  return { text, params: params.values, written, read, readsBack: readRelation !== undefined, returned }
}

/** Names a column of the values a row must still hold beside the one of its change (`Total`, `Title_read`). */
const READ_SUFFIX = '_read'

/** Table by table in name order (as UnitOfWork.lock sorts them), key by key within a table. */
function byTableAndKey(a: PendingRow, b: PendingRow): number {
  const [x, y] = [a.entry.entity.name, b.entry.entity.name]
  if (x !== y) return x < y ? -1 : 1
  return a.entry.key < b.entry.key ? -1 : a.entry.key > b.entry.key ? 1 : 0
}

/** A stored row the rules read a value from without writing it: the version they read, and its xmin when known. */
export interface ReadRow {
  readonly entity: EntityModel
  readonly key: string
  readonly version: number
  readonly xmin?: string
}

/** The steps as the statement's common table expressions, named "w0", "w1", … in order. */
export function withSteps(steps: readonly string[]): string {
  return `with ${steps.map((step, i) => `"w${i}" as (${step})`).join(',\n')}`
}

/** What a unit took from the remembered rows, for the statement that checks it. */
export interface Taken {
  readonly rows: readonly (readonly [Entry, RememberedRow])[]
  readonly members: readonly TakenMembers[]
}

/** A parent's members taken from the remembered ones: it must still have `count`. */
export interface TakenMembers {
  readonly collection: CollectionProperty
  readonly parentKey: string
  readonly count: number
}

/** The rows a write step returned, as JSON in the statement's `column`, for remembering them. */
export interface ReturnedRows {
  readonly entity: EntityModel
  readonly column: string
}

function takenCount(taken: Taken): number {
  return taken.rows.length + taken.members.length
}

/** The rows counted by the named steps, as SQL ('0' for none). */
function countOf(names: readonly string[]): string {
  return names.length === 0 ? '0' : names.map((name) => `(select count(*) from ${name})`).join(' + ')
}

/**
 * `then` when everything `taken` is still stored as remembered, else the conflict that says
 * it is not (isRememberedRowChanged). The steps that find it are added to `steps` ("w<i>").
 */
export function rememberedCheck(params: SqlParameters, taken: Taken, steps: string[], then: string): string {
  const names = rememberedSteps(params, taken).map((step) => `"w${steps.push(step) - 1}"`)
  return `case when ${countOf(names)} = ${params.add(takenCount(taken), 'int')} then ${then} else "_conflict"(${params.add(REMEMBERED_ROW_CHANGED, 'text')}) end`
}

/**
 * Steps that find what a unit took from the remembered rows still stored so: each row with
 * the same version and the same xmin (a step per table), each parent with as many members
 * as taken (a step each). Their rows counted, fewer than taken means something changed.
 */
function rememberedSteps(params: SqlParameters, taken: Taken): string[] {
  const byEntity = Map.groupBy(taken.rows, ([entry]) => entry.entity)
  const rows = [...byEntity].map(([entity, pairs]) => {
    const values = pairs.map(([entry, row]) => `(${params.add(entry.key, 'uuid')}, ${params.add(row.version, 'int')}, ${params.add(row.xmin, 'xid')})`)
    return `select 1 from ${quote(entity.table)} t join (values ${values.join(', ')}) as v(k, version, xmin)
        on t.${quote(KEY)} = v.k and t.${quote(VERSION_COLUMN)} = v.version and t.xmin = v.xmin`
  })
  const members = taken.members.map(
    ({ collection, parentKey, count }) =>
      `select 1 from (select count(*) as n from ${quote(collection.target.table)} t where t.${quote(collection.inverse.column)} = ${params.add(parentKey, 'uuid')}) c where c.n = ${params.add(count, 'int')}`,
  )
  return [...rows, ...members]
}

/** A column of the rows a flush writes: its name, its SQL type, its value in a row. */
interface RowColumn {
  readonly name: string
  readonly type: string
  readonly value: (row: PendingRow) => unknown
}

/**
 * Up to this many rows per table go into a write as a VALUES list, one parameter per value;
 * more as one array parameter per column (unnest), so a large batch is still one statement
 * of a fixed shape. PostgreSQL runs a short VALUES list for about 70 µs less than unnest's
 * function scan, which is a third of a one-row update's cost (W2 in test/bench).
 */
const VALUES_LIST_ROWS = 8

/** The rows as a relation `v` with `columns`: a VALUES list or unnest of arrays. */
function rowSource(params: SqlParameters, rows: readonly PendingRow[], columns: readonly RowColumn[]): string {
  const names = columns.map((c) => quote(c.name)).join(', ')
  if (rows.length > VALUES_LIST_ROWS) {
    const arrays = columns.map((c) => params.add(rows.map(c.value), `${c.type}[]`))
    return `unnest(${arrays.join(', ')}) as v(${names})`
  }
  const values = rows.map((r) => `(${columns.map((c) => params.add(c.value(r), c.type)).join(', ')})`)
  return `(values ${values.join(', ')}) as v(${names})`
}

