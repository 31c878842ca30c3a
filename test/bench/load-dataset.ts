// Loads the generated CSV files into a database that has the demo tables (the floor's schema.sql
// or an entityctl tenant after migration). The CSV headers name the columns, so the same loader
// serves any database that follows entityctl's storage conventions.
import { closeSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { copyFromFile } from './copy-from-file.ts'

/** Parents before children, so the load also works where foreign keys stay enforced. */
export const LOAD_ORDER = ['Product', 'Customer', 'Order', 'OrderLine'] as const

export type LoadedCounts = Record<(typeof LOAD_ORDER)[number], number>

export async function loadDataset(connectionString: string, dataDir: string): Promise<LoadedCounts> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    await client.query('BEGIN')
    // The data is consistent by construction; skipping the per-row foreign-key triggers makes
    // the load several times faster. Only a superuser may do this: otherwise the checks run.
    await client.query('SAVEPOINT replica')
    await client.query('SET LOCAL session_replication_role = replica').catch(() => client.query('ROLLBACK TO replica'))
    await client.query(`TRUNCATE ${LOAD_ORDER.map((table) => `"${table}"`).join(', ')}`)
    // Indexes that back no constraint (foreign keys', declared ones) are built once after the
    // rows rather than row by row: at scale 10 that halves the load.
    const { rows: indexes } = await client.query<{ name: string; definition: string }>(
      `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition from pg_index i
        where i.indrelid = any($1::regclass[]) and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
      [LOAD_ORDER.map((table) => `"${table}"`)],
    )
    for (const index of indexes) await client.query(`DROP INDEX ${index.name}`)
    const counts = {} as LoadedCounts
    for (const table of LOAD_ORDER) {
      const file = join(dataDir, `${table}.csv`)
      counts[table] = await copyFromFile(client, copyStatement(table, csvHeader(file)), file)
    }
    await client.query(`SET LOCAL maintenance_work_mem = '256MB'`)
    for (const index of indexes) await client.query(index.definition)
    await client.query('COMMIT')
    return counts
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    await client.end()
  }
}

function copyStatement(table: string, columns: string[]): string {
  const list = columns.map((column) => `"${column}"`).join(', ')
  return `COPY "${table}" (${list}) FROM STDIN WITH (FORMAT csv, HEADER true)`
}

function csvHeader(file: string): string[] {
  // The header is the first line of a file of tens of megabytes: read only its first block.
  const start = readFirstBytes(file, 4096)
  const line = start.slice(0, start.indexOf('\n'))
  if (!/^[A-Za-z_,]+$/.test(line)) throw new Error(`${file}: unexpected CSV header "${line}"`)
  return line.split(',')
}

function readFirstBytes(file: string, length: number): string {
  const buffer = Buffer.alloc(length)
  const fd = openSync(file, 'r')
  try {
    const read = readSync(fd, buffer, 0, length, 0)
    return buffer.subarray(0, read).toString('utf8')
  } finally {
    closeSync(fd)
  }
}
