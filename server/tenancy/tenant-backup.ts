// A tenant's data as one file, and back: `tenant backup`, `tenant restore`, `tenant move`.
//
// entityctl owns each tenant's schema (the plugins and persistence/internal-tables.ts make
// it), so a backup holds the rows, not the DDL: every table's COPY stream in PostgreSQL's text
// format, which any server version reads (pg_dump is not shipped with the embedded server,
// and a client older than the server refuses to dump it). A restore lets the plugins create
// the schema, then copies the rows in and checks them against the file before it commits.
//
// The file (gzip):
//   line 1    {"format":"entityctl-tenant-backup","version":1, tenant, createdAt, entityctl,
//              server, keyFingerprint, tables:[{name, columns:[[name, type]…]}…]}
//   per table, in the order of the header (a table after the tables it references):
//             its rows, one COPY text line each; a line `\.`; a line {"table","rows","digest"}
// `digest` is a sum of per-row SHA-256 hashes: independent of row order, so the restored
// table, copied out again, must give the same sum, and any row changed, lost or doubled shows.
//
// The whole backup is read in one REPEATABLE READ READ ONLY transaction: every table as of the
// same moment, so a backup taken while requests write restores to a consistent state (an
// order's total equals the sum of its lines). The EncryptionKey is never in the file: encrypted
// properties stay ciphertext, and the key goes beside it (tenant-keys.ts key file); the header
// records the key's fingerprint, so a restore with another key is refused before it writes.

import { createHash } from 'node:crypto'
import type { Readable, Writable } from 'node:stream'
import pg from 'pg'
import { from as copyFrom, to as copyTo } from 'pg-copy-streams'
import { quoteIdentifier as quote } from '../persistence/sql.ts'

export const BACKUP_FORMAT = 'entityctl-tenant-backup'
export const BACKUP_VERSION = 1

export class BackupError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TenantAdminError'
  }
}

export interface BackupTable {
  readonly name: string
  /** [column, SQL type] in table order. */
  readonly columns: readonly (readonly [string, string])[]
}

export interface BackupHeader {
  readonly format: typeof BACKUP_FORMAT
  readonly version: number
  readonly tenant: string
  readonly createdAt: string
  /** entityctl's version (package.json) that wrote it. */
  readonly entityctl: string
  /** PostgreSQL's server_version of the source. */
  readonly server: string
  readonly keyFingerprint: string
  readonly tables: readonly BackupTable[]
}

export interface TableSummary {
  readonly table: string
  readonly rows: number
  readonly digest: string
}

export type ProgressReport = (text: string) => void

/** Session settings under which COPY text is the same on both sides of a backup. */
const COPY_SETTINGS = [
  `set local timezone = 'UTC'`,
  `set local datestyle = 'ISO, YMD'`,
  `set local intervalstyle = 'postgres'`,
  `set local extra_float_digits = 1`,
  `set local bytea_output = 'hex'`,
]

const END_OF_TABLE = '\\.'
/** A progress line after this many rows of a table. */
const PROGRESS_ROWS = 50_000

/** An order-independent digest of a multiset of rows: four 32-bit sums of their SHA-256 words. */
class RowDigest {
  readonly #sums = new Uint32Array(4)
  rows = 0
  add(line: Buffer): void {
    const hash = createHash('sha256').update(line).digest()
    for (let i = 0; i < 4; i++) this.#sums[i] = (this.#sums[i] + hash.readUInt32BE(i * 4)) >>> 0
    this.rows++
  }
  toString(): string {
    return [...this.#sums].map((n) => n.toString(16).padStart(8, '0')).join('')
  }
}

/** Calls `line` for every complete line of the chunks (without its \n). */
function lineSplitter(line: (bytes: Buffer) => void): { push(chunk: Buffer): void; end(): void } {
  let rest: Buffer | undefined
  return {
    push(chunk) {
      const data = rest ? Buffer.concat([rest, chunk]) : chunk
      let start = 0
      for (let end = data.indexOf(0x0a, start); end !== -1; end = data.indexOf(0x0a, start)) {
        line(data.subarray(start, end))
        start = end + 1
      }
      rest = start < data.length ? Buffer.from(data.subarray(start)) : undefined
    },
    end() {
      if (rest?.length) line(rest)
      rest = undefined
    },
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  // A lost connection fails the statement in flight; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  return client
}

/** The tables of the public schema, each after the tables it references; columns as COPY takes them. */
async function tablesOf(client: pg.Client): Promise<BackupTable[]> {
  const { rows } = await client.query<{ table: string; column: string; type: string }>(
    `select c.relname as table, a.attname as column, format_type(a.atttypid, a.atttypmod) as type
       from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = c.oid
      where n.nspname = 'public' and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
      order by c.relname, a.attnum`,
  )
  const columns = new Map<string, [string, string][]>()
  for (const row of rows) {
    const list = columns.get(row.table) ?? []
    list.push([row.column, row.type])
    columns.set(row.table, list)
  }
  const references = await client.query<{ child: string; parent: string }>(
    `select child.relname as child, parent.relname as parent
       from pg_constraint k
       join pg_class child on child.oid = k.conrelid
       join pg_class parent on parent.oid = k.confrelid
       join pg_namespace n on n.oid = k.connamespace
      where k.contype = 'f' and n.nspname = 'public' and k.conrelid <> k.confrelid`,
  )
  const parents = new Map<string, Set<string>>()
  for (const { child, parent } of references.rows) parents.set(child, (parents.get(child) ?? new Set()).add(parent))
  // Depth-first: a table is listed after the tables it references (a cycle is cut where it is
  // met: a restore checks the foreign keys once every table is filled, so order is not needed
  // for it; it makes a backup read like the schema).
  const ordered: string[] = []
  const seen = new Set<string>()
  const visit = (table: string) => {
    if (seen.has(table)) return
    seen.add(table)
    for (const parent of [...(parents.get(table) ?? [])].sort()) if (columns.has(parent)) visit(parent)
    ordered.push(table)
  }
  for (const table of [...columns.keys()].sort()) visit(table)
  return ordered.map((name) => ({ name, columns: columns.get(name)! }))
}

const columnList = (table: BackupTable) => table.columns.map(([name]) => quote(name)).join(', ')

/**
 * Writes the tenant's backup (uncompressed: the caller pipes it through gzip for a file) to
 * `out`, from one snapshot of its database. Resolves with each table's summary once written.
 */
export async function writeBackup(
  url: string,
  out: Writable,
  meta: { tenant: string; entityctl: string; keyFingerprint: string },
  progress?: ProgressReport,
): Promise<TableSummary[]> {
  const client = await connect(url)
  const write = (data: string | Buffer) => writeTo(out, data)
  try {
    // One snapshot for every table: rows committed after it are in no table, rows before in all.
    await client.query('begin isolation level repeatable read read only')
    for (const setting of COPY_SETTINGS) await client.query(setting)
    const tables = await tablesOf(client)
    const { rows } = await client.query<{ server_version: string }>('show server_version')
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      tenant: meta.tenant,
      createdAt: new Date().toISOString(),
      entityctl: meta.entityctl,
      server: rows[0].server_version,
      keyFingerprint: meta.keyFingerprint,
      tables,
    }
    await write(`${JSON.stringify(header)}\n`)
    const summaries: TableSummary[] = []
    for (const table of tables) {
      progress?.(`backing up ${table.name}`)
      const digest = new RowDigest()
      const lines = lineSplitter((line) => {
        digest.add(line)
        if (digest.rows % PROGRESS_ROWS === 0) progress?.(`backing up ${table.name} (${digest.rows} rows)`)
      })
      const stream = client.query(copyTo(`copy ${quote(table.name)} (${columnList(table)}) to stdout`))
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        lines.push(chunk)
        await write(chunk)
      }
      lines.end()
      const summary = { table: table.name, rows: digest.rows, digest: digest.toString() }
      summaries.push(summary)
      await write(`${END_OF_TABLE}\n${JSON.stringify(summary)}\n`)
    }
    await client.query('commit')
    return summaries
  } finally {
    await client.end()
  }
}

/** Writes with backpressure; fails when the reader stopped (a move whose restore failed). */
function writeTo(out: Writable, data: string | Buffer): Promise<void> {
  if (out.destroyed) return Promise.reject(new BackupError('The backup was stopped: its reader ended.'))
  if (out.write(data)) return Promise.resolve()
  return new Promise<void>((resolve, reject) => {
    const drained = () => {
      out.off('close', closed)
      resolve()
    }
    const closed = () => {
      out.off('drain', drained)
      reject(new BackupError('The backup was stopped: its reader ended.'))
    }
    out.once('drain', drained)
    out.once('close', closed)
  })
}

/** The lines of a stream, as buffers without their \n. */
async function* linesOf(input: Readable): AsyncGenerator<Buffer> {
  let rest: Buffer | undefined
  for await (const chunk of input as AsyncIterable<Buffer>) {
    const data = rest ? Buffer.concat([rest, chunk]) : chunk
    let start = 0
    for (let end = data.indexOf(0x0a, start); end !== -1; end = data.indexOf(0x0a, start)) {
      yield data.subarray(start, end)
      start = end + 1
    }
    rest = start < data.length ? Buffer.from(data.subarray(start)) : undefined
  }
  if (rest?.length) yield rest
}

/** Reads the header line of a backup (the stream is left after it). */
export async function readBackupHeader(lines: AsyncIterator<Buffer>): Promise<BackupHeader> {
  const first = await lines.next()
  let header: BackupHeader | undefined
  try {
    header = first.done ? undefined : JSON.parse(first.value.toString('utf8'))
  } catch {
    header = undefined
  }
  if (header?.format !== BACKUP_FORMAT) throw new BackupError('This is not an entityctl tenant backup (no backup header).')
  if (header.version !== BACKUP_VERSION) throw new BackupError(`This backup has format version ${header.version}; this entityctl reads version ${BACKUP_VERSION}.`)
  return header
}

export function backupLines(input: Readable): AsyncIterator<Buffer> {
  return linesOf(input)[Symbol.asyncIterator]()
}

/**
 * Copies the rows of a backup into the database at `url`, whose schema the plugins have made:
 * in one transaction, every table of the backup emptied, filled, copied out again and compared
 * with the file's row count and digest. Any difference rolls everything back.
 * Refuses before writing when a table or column of the backup has no place in the schema.
 */
export async function restoreRows(url: string, header: BackupHeader, lines: AsyncIterator<Buffer>, progress?: ProgressReport): Promise<TableSummary[]> {
  const client = await connect(url)
  try {
    await client.query('begin')
    for (const setting of COPY_SETTINGS) await client.query(setting)
    checkSchema(header, await tablesOf(client))
    const names = header.tables.map((t) => quote(t.name))
    if (names.length) await client.query(`truncate ${names.join(', ')} cascade`)
    const foreignKeys = await dropForeignKeys(client, header.tables.map((t) => t.name))
    const restored: TableSummary[] = []
    for (const table of header.tables) {
      progress?.(`restoring ${table.name}`)
      // The rows as they were: no trigger of entityctl's (row versions, access notices,
      // fallback PATs) may change them on the way in.
      await client.query(`alter table ${quote(table.name)} disable trigger user`)
      const rows = await copyTableIn(client, table, lines, progress)
      await client.query(`alter table ${quote(table.name)} enable trigger user`)
      const trailer = await lines.next()
      const expected = trailer.done ? undefined : (JSON.parse(trailer.value.toString('utf8')) as TableSummary)
      if (!expected || expected.table !== table.name) throw new BackupError(`The backup ends early, in table ${table.name}: the file is incomplete.`)
      if (rows !== expected.rows) throw new BackupError(`Table ${table.name}: the file has ${rows} rows, its summary says ${expected.rows}: the file is damaged.`)
      const copied = await digestTable(client, table)
      if (copied.rows !== expected.rows || copied.digest !== expected.digest) {
        throw new BackupError(`Table ${table.name}: the restored rows differ from the backup's (${copied.rows} rows, digest ${copied.digest}; the backup: ${expected.rows} rows, digest ${expected.digest}). Nothing was restored.`)
      }
      restored.push(copied)
    }
    progress?.('checking the foreign keys')
    await addForeignKeys(client, foreignKeys)
    await resetSequences(client)
    await client.query('commit')
    return restored
  } catch (error) {
    await client.query('rollback').catch(() => {})
    throw error
  } finally {
    await client.end()
  }
}

interface ForeignKey {
  readonly name: string
  readonly table: string
  readonly definition: string
}

/**
 * Drops the foreign keys of the tables, to be added again once every row is in (as pg_dump
 * restores): checked row by row during a COPY they cost more than the COPY itself (15 of 27 s
 * for 200,000 order lines); added after, each is one join over the filled tables. Same name and
 * definition, in the same transaction: nobody sees the schema without them.
 */
async function dropForeignKeys(client: pg.Client, tables: readonly string[]): Promise<ForeignKey[]> {
  const { rows } = await client.query<ForeignKey>(
    `select k.conname as name, t.relname as table, pg_get_constraintdef(k.oid) as definition
       from pg_constraint k
       join pg_class t on t.oid = k.conrelid
       join pg_namespace n on n.oid = t.relnamespace
      where k.contype = 'f' and n.nspname = 'public' and t.relname = any($1::text[])
      order by t.relname, k.conname`,
    [tables],
  )
  for (const key of rows) await client.query(`alter table ${quote(key.table)} drop constraint ${quote(key.name)}`)
  return rows
}

/** Adds the foreign keys back; a row of the backup without the row it references fails here. */
async function addForeignKeys(client: pg.Client, keys: readonly ForeignKey[]): Promise<void> {
  for (const key of keys) {
    try {
      await client.query(`alter table ${quote(key.table)} add constraint ${quote(key.name)} ${key.definition}`)
    } catch (error) {
      throw new BackupError(`Table ${key.table}: the backup's rows break the foreign key ${key.name} (${(error as Error).message}); the file is damaged. Nothing was restored.`)
    }
  }
}

/** Every table and column of the backup must exist with the same type; new ones may be added. */
function checkSchema(header: BackupHeader, target: readonly BackupTable[]): void {
  const byName = new Map(target.map((t) => [t.name, new Map(t.columns)]))
  const problems: string[] = []
  for (const table of header.tables) {
    const columns = byName.get(table.name)
    if (!columns) {
      problems.push(`table ${table.name} does not exist`)
      continue
    }
    for (const [column, type] of table.columns) {
      const now = columns.get(column)
      if (now === undefined) problems.push(`column ${table.name}.${column} does not exist`)
      else if (now !== type) problems.push(`column ${table.name}.${column} is ${now}, the backup's is ${type}`)
    }
  }
  if (problems.length) {
    throw new BackupError(
      `The backup does not fit the schema the plugins make now (${problems.join('; ')}). Restore with the plugins it was taken with (entityctl ${header.entityctl}, ${header.createdAt}), then migrate.`,
    )
  }
}

/** The table's rows, up to the end marker, into a COPY FROM; resolves with their number. */
async function copyTableIn(client: pg.Client, table: BackupTable, lines: AsyncIterator<Buffer>, progress?: ProgressReport): Promise<number> {
  const stream = client.query(copyFrom(`copy ${quote(table.name)} (${columnList(table)}) from stdin`))
  const finished = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve)
    stream.on('error', reject)
  })
  // The COPY can fail while this waits for the next line (its connection ended): heard here,
  // and thrown where `finished` is awaited, not as an unhandled rejection that ends the process.
  finished.catch(() => {})
  // Rows are sent in batches of about 64 KB: a write per row cost more than the COPY itself.
  let batch: Buffer[] = []
  let size = 0
  let rows = 0
  const flush = async () => {
    if (!batch.length) return
    const data = Buffer.concat(batch)
    batch = []
    size = 0
    if (!stream.write(data)) {
      await new Promise<void>((resolve, reject) => {
        const drained = () => {
          stream.off('error', failed)
          resolve()
        }
        const failed = (error: Error) => {
          stream.off('drain', drained)
          reject(error)
        }
        stream.once('drain', drained)
        stream.once('error', failed)
      })
    }
  }
  try {
    for (;;) {
      const next = await lines.next()
      if (next.done) throw new BackupError(`The backup ends early, in table ${table.name}: the file is incomplete.`)
      const line = next.value
      if (line.length === 2 && line[0] === 0x5c && line[1] === 0x2e) break
      batch.push(line, NEWLINE)
      size += line.length + 1
      rows++
      if (rows % PROGRESS_ROWS === 0) progress?.(`restoring ${table.name} (${rows} rows)`)
      if (size >= 65_536) await flush()
    }
    await flush()
  } catch (error) {
    // The input failed (a truncated gzip stream, an interrupted move) or ended early. A COPY
    // left open keeps the connection waiting for rows, and the rollback queued behind it
    // would never run: the COPY is failed first, and this waits until the server has ended it.
    stream.destroy(error as Error)
    await finished.catch(() => {})
    throw error
  }
  stream.end()
  await finished
  return rows
}

const NEWLINE = Buffer.from('\n')

/** The table's rows, copied out as a backup writes them: their number and digest. */
async function digestTable(client: pg.Client, table: BackupTable): Promise<TableSummary> {
  const digest = new RowDigest()
  const lines = lineSplitter((line) => digest.add(line))
  for await (const chunk of client.query(copyTo(`copy ${quote(table.name)} (${columnList(table)}) to stdout`)) as AsyncIterable<Buffer>) lines.push(chunk)
  lines.end()
  return { table: table.name, rows: digest.rows, digest: digest.toString() }
}

/** Sequences behind serial columns continue after the restored rows' largest value. */
async function resetSequences(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ sequence: string; table: string; column: string }>(
    `select pg_get_serial_sequence(format('%I', table_name), column_name) as sequence, table_name as table, column_name as column
       from information_schema.columns
      where table_schema = 'public' and pg_get_serial_sequence(format('%I', table_name), column_name) is not null`,
  )
  for (const row of rows) {
    await client.query(`select setval($1::regclass, coalesce((select max(${quote(row.column)}) from ${quote(row.table)}), 0) + 1, false)`, [row.sequence])
  }
}

/** Whether the database at `url` has any table in its public schema (a restore target must not). */
export async function hasTables(url: string): Promise<boolean> {
  const client = await connect(url)
  try {
    const { rowCount } = await client.query(`select 1 from pg_tables where schemaname = 'public' limit 1`)
    return rowCount === 1
  } finally {
    await client.end()
  }
}
