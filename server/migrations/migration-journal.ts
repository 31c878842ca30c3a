// Each tenant database's record of the migrations applied to it, `_Migration`: when, the schema
// version reached, the statements run, what was knowingly lost, which plugins (and their
// versions) asked for it, and which entityctl did it. The newest row's SchemaVersion is the
// schema the database has; a start compares it with the model's (schema-version.ts).

import type pg from 'pg'
import type { Model } from '../model/model.ts'

export const JOURNAL_TABLE = `create table if not exists "_Migration" (
   "Id" bigserial primary key,
   "AppliedAt" timestamptz not null default now(),
   "SchemaVersion" text not null,
   "Statements" text[] not null,
   "Renames" text[] not null default '{}',
   "DataLoss" text[] not null default '{}',
   "Plugins" jsonb not null,
   "AppliedBy" text not null)`

export interface JournalEntry {
  readonly appliedAt: Date
  readonly schemaVersion: string
  readonly statements: readonly string[]
  readonly renames: readonly string[]
  readonly dataLoss: readonly string[]
  readonly plugins: readonly { source: string; version?: string }[]
  readonly appliedBy: string
}

/** The schema version the database has; undefined when no migration was ever recorded there. */
export async function recordedSchemaVersion(client: pg.Client | pg.PoolClient): Promise<string | undefined> {
  // Two statements: a statement naming a table that does not exist fails when parsed.
  const exists = await client.query<{ table: string | null }>(`select to_regclass('"_Migration"')::text as table`)
  if (!exists.rows[0].table) return undefined
  const { rows } = await client.query<{ version: string }>(`select "SchemaVersion" as version from "_Migration" order by "Id" desc limit 1`)
  return rows[0]?.version
}

export async function recordMigration(
  client: pg.Client,
  entry: { schemaVersion: string; statements: readonly string[]; renames: readonly string[]; dataLoss: readonly string[]; model: Model; appliedBy: string },
): Promise<void> {
  await client.query(
    `insert into "_Migration" ("SchemaVersion", "Statements", "Renames", "DataLoss", "Plugins", "AppliedBy") values ($1, $2, $3, $4, $5, $6)`,
    [entry.schemaVersion, entry.statements, entry.renames, entry.dataLoss, JSON.stringify(entry.model.plugins ?? []), entry.appliedBy],
  )
}

export async function readJournal(client: pg.Client, limit = 20): Promise<JournalEntry[]> {
  if (!(await recordedSchemaVersion(client))) return []
  const { rows } = await client.query(
    `select "AppliedAt", "SchemaVersion", "Statements", "Renames", "DataLoss", "Plugins", "AppliedBy" from "_Migration" order by "Id" desc limit $1`,
    [limit],
  )
  return rows.map((row) => ({
    appliedAt: row.AppliedAt,
    schemaVersion: row.SchemaVersion,
    statements: row.Statements,
    renames: row.Renames,
    dataLoss: row.DataLoss,
    plugins: row.Plugins,
    appliedBy: row.AppliedBy,
  }))
}
