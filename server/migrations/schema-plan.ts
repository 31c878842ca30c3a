// What a migration of one tenant database would do, computed without changing anything:
// the renames the plugins declare (`renamedFrom`), MikroORM's schema diff for everything
// else, the tables of entities no plugin declares any more, and what each destructive
// statement would lose. Only what entityctl made is managed: tables and indexes carry the
// comment MANAGED_COMMENT (constraints: the names entityctl gives them); an unmarked index,
// table or constraint (a DBA's report index, a table or a check of their own) is never
// dropped, only listed as unmanaged.
//
// The diff never renames on its own: MikroORM takes a removed column and an added one of the
// same type for a rename, which would hand the old property's values to an unrelated new one.
// Only a declared rename keeps data; a guessed one is planned as the drop and the add it is.
//
// Order of the plan: the diff (computed as if the renames had not happened yet, so it sees
// the data where it lies), then the renames, then the names of the managed indexes and
// constraints that follow a renamed table or column.

import { DatabaseSchema, MikroORM, SchemaComparator, type SchemaDifference } from '@mikro-orm/postgresql'
import type pg from 'pg'
import { SEARCH_COLUMN, type Model } from '../model/model.ts'
import { entitySchemas, managedIndexNames, MANAGED_COMMENT, type PendingRenames } from '../persistence/entity-schemas.ts'
import { quoteIdentifier } from '../persistence/sql.ts'

export interface SchemaPlan {
  /** Statements to run, in order, in one transaction. */
  readonly statements: readonly string[]
  /** What the destructive statements would lose, one line each; empty: nothing. */
  readonly losses: readonly string[]
  /** Renames declared by the plugins that this plan carries out, as `Old → New`. */
  readonly renames: readonly string[]
  /** Objects in the database that entityctl did not make and leaves alone. */
  readonly unmanaged: readonly string[]
}

interface Catalog {
  /** Base tables of the public schema → their comment. */
  readonly tables: ReadonlyMap<string, string | null>
  /** Table → its columns. */
  readonly columns: ReadonlyMap<string, ReadonlySet<string>>
  /** Index name → its table and comment; `constraint`: it backs a primary key or unique constraint. */
  readonly indexes: ReadonlyMap<string, { readonly table: string; readonly comment: string | null; readonly constraint: boolean }>
  /** Constraint name (primary key, unique, foreign key, check) → its table. */
  readonly constraints: ReadonlyMap<string, { readonly table: string }>
}

const DROP_TABLE = /^drop table (?:if exists )?"([^"]+)"/i
const DROP_COLUMN = /^alter table "([^"]+)" drop column "([^"]+)"/i
const ALTER_TYPE = /^alter table "([^"]+)" alter column "([^"]+)" type /i
const DROP_INDEX = /^drop index (?:"public"\.)?"([^"]+)"/i
const DROP_CONSTRAINT = /^alter table "([^"]+)" drop constraint "([^"]+)"/i

/**
 * The plan for the database `client` is connected to. The schema diff needs MikroORM's schema
 * generator: an instance is booted for the length of the plan, on a connection of its own, and
 * closed; serving never boots one.
 */
export async function planSchema(model: Model, url: string, client: pg.Client): Promise<SchemaPlan> {
  const catalog = await readCatalog(client)
  const pending = pendingRenames(model, catalog)
  const diff = await schemaDiff(model, url, pending.renames)
  const statements: string[] = []
  const losses: string[] = []
  const unmanaged = new Set<string>()
  const expected = new Set([...model.entities.values()].flatMap((entity) => managedIndexNames(entity)))
  const isManagedIndex = (name: string) => {
    const index = catalog.indexes.get(name)
    return !index || index.comment === MANAGED_COMMENT || expected.has(name)
  }
  // Constraints entityctl makes: keys, foreign keys (MikroORM's `_foreign`), natural keys.
  const isManagedConstraint = (name: string) => /_(pkey|foreign)$/.test(name) || (catalog.indexes.has(name) && isManagedIndex(name))
  for (const statement of diff) {
    const index = DROP_INDEX.exec(statement)?.[1]
    if (index && !isManagedIndex(index)) continue
    const constraint = DROP_CONSTRAINT.exec(statement)?.[2]
    if (constraint && !isManagedConstraint(constraint)) continue
    statements.push(statement)
  }
  // Tables of entities no plugin declares any more: only those entityctl made (marked).
  const declared = new Set([...model.entities.values()].map((entity) => pending.renames.tables.get(entity.table) ?? entity.table))
  for (const [table, comment] of catalog.tables) {
    if (table.startsWith('_') || table.startsWith('mikro_orm') || declared.has(table)) continue
    if (comment !== MANAGED_COMMENT) {
      unmanaged.add(`table "${table}"`)
      continue
    }
    statements.push(`drop table ${quoteIdentifier(table)} cascade`)
    const rows = await countRows(client, table)
    if (rows > 0) losses.push(`table "${table}" (no plugin declares it any more) with ${rows} rows would be dropped`)
  }
  for (const statement of statements) losses.push(...(await lossOf(client, statement, declared)))
  statements.push(...pending.statements)
  const onEntityTable = (table: string) => !table.startsWith('_') && (declared.has(table) || catalog.tables.get(table) === MANAGED_COMMENT)
  for (const [name, index] of catalog.indexes) {
    if (!onEntityTable(index.table) || index.constraint || isManagedIndex(name)) continue
    unmanaged.add(`index "${name}" on "${index.table}"`)
  }
  for (const [name, constraint] of catalog.constraints) {
    if (onEntityTable(constraint.table) && !isManagedConstraint(name)) unmanaged.add(`constraint "${name}" on "${constraint.table}"`)
  }
  return { statements, losses, renames: pending.described, unmanaged: [...unmanaged].sort() }
}

/**
 * Marks every index the model declares as entityctl's, after a plan is applied (in its
 * transaction, on `client`), so that later plans know which indexes they may drop.
 */
export async function markManagedIndexes(client: pg.Client, model: Model): Promise<void> {
  const names = [...model.entities.values()].flatMap((entity) => managedIndexNames(entity))
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'i' and c.relname = any($1::text[])
        and obj_description(c.oid, 'pg_class') is distinct from $2`,
    [names, MANAGED_COMMENT],
  )
  // COMMENT takes no parameters; the name is quoted, the comment a constant.
  for (const { name } of rows) await client.query(`comment on index ${quoteIdentifier(name)} is '${MANAGED_COMMENT}'`)
}

async function schemaDiff(model: Model, url: string, renames: PendingRenames): Promise<string[]> {
  const orm = await MikroORM.init({
    clientUrl: url,
    entities: entitySchemas(model, renames),
    discovery: { warnWhenNoEntities: false },
    pool: { min: 0, max: 1 },
    allowGlobalContext: false,
    forceUtcTimezone: true,
    ensureDatabase: false,
    // Internal tables (_Pat, _Workflow, …) and their triggers belong to their subsystems'
    // DDL (persistence/internal-tables.ts); the schema diff must not touch them.
    schemaGenerator: { skipTables: [/^_/], ignoreTriggers: true },
  })
  try {
    // What `orm.schema.getUpdateSchemaSQL` does, with the comparator's guessed renames undone
    // before the SQL is written.
    const target = orm.schema.getTargetSchema()
    const { skipTables } = orm.config.get('schemaGenerator')
    const current = await DatabaseSchema.create(orm.em.getConnection(), orm.em.getPlatform(), orm.config, undefined, target.getNamespaces(), undefined, skipTables)
    current.prune(undefined, [])
    target.prune(undefined, [])
    const diff = new SchemaComparator(orm.em.getPlatform()).compare(current, target)
    undoGuessedRenames(diff)
    const ddl = orm.schema.diffToSQL(diff, { wrap: false, dropTables: false })
    return ddl
      .split(/;\s*\n/)
      .map((s) => s.trim().replace(/;$/, ''))
      .filter((s) => s.length > 0 && !/^set names/i.test(s))
  } finally {
    await orm.close(true)
  }
}

/**
 * Turns the column renames MikroORM's comparator guessed back into a drop and an add. The diff
 * is computed with the declared renames not yet done (their new properties still map to the
 * old columns), so every rename in it is a guess: `Score` removed and `Extra` added, both
 * integers, is not the same property.
 */
function undoGuessedRenames(diff: SchemaDifference): void {
  for (const table of Object.values(diff.changedTables)) {
    for (const [oldName, column] of Object.entries(table.renamedColumns)) {
      table.removedColumns[oldName] = table.fromTable.getColumn(oldName)!
      table.addedColumns[column.name] = column
      delete table.renamedColumns[oldName]
    }
  }
}

interface PlannedRenames {
  readonly renames: PendingRenames
  readonly statements: string[]
  readonly described: string[]
}

/** The renames the plugins declare whose old name is still in the database and new name not yet. */
function pendingRenames(model: Model, catalog: Catalog): PlannedRenames {
  const tables = new Map<string, string>()
  const columns = new Map<string, Map<string, string>>()
  const statements: string[] = []
  const described: string[] = []
  for (const entity of model.entities.values()) {
    let current = entity.table
    if (entity.renamedFrom && !catalog.tables.has(entity.table) && catalog.tables.has(entity.renamedFrom)) {
      current = entity.renamedFrom
      tables.set(entity.table, current)
      statements.push(`alter table ${quoteIdentifier(current)} rename to ${quoteIdentifier(entity.table)}`)
      described.push(`entity ${entity.renamedFrom} → ${entity.name}`)
    }
    const existing = catalog.columns.get(current) ?? new Set<string>()
    const renamedColumns = new Map<string, string>()
    for (const property of entity.properties.values()) {
      if (property.kind === 'collection' || (property.kind === 'scalar' && (property.foreignKeyOf || !property.column))) continue
      const previous = property.decl.renamedFrom
      if (!previous) continue
      const oldColumn = property.kind === 'reference' ? `${previous}_Guid` : previous
      const newColumn = property.column!
      if (existing.has(newColumn) || !existing.has(oldColumn)) continue
      renamedColumns.set(newColumn, oldColumn)
      statements.push(`alter table ${quoteIdentifier(entity.table)} rename column ${quoteIdentifier(oldColumn)} to ${quoteIdentifier(newColumn)}`)
      described.push(`property ${entity.name}.${previous} → ${entity.name}.${property.name}`)
    }
    if (renamedColumns.size > 0) columns.set(entity.table, renamedColumns)
    if (current !== entity.table || renamedColumns.size > 0) {
      statements.push(...renamedObjects(catalog, current, entity.table, renamedColumns))
    }
  }
  return { renames: { tables, columns }, statements, described }
}

/** Managed indexes and constraints named after a renamed table or column take the new name. */
function renamedObjects(catalog: Catalog, oldTable: string, newTable: string, columns: ReadonlyMap<string, string>): string[] {
  const statements: string[] = []
  const rename = (name: string): string => {
    if (!name.startsWith(`${oldTable}_`)) return name
    let rest = name.slice(oldTable.length + 1)
    for (const [newColumn, oldColumn] of columns) {
      if (rest.startsWith(`${oldColumn}_`)) rest = `${newColumn}_${rest.slice(oldColumn.length + 1)}`
    }
    return `${newTable}_${rest}`
  }
  for (const [name, constraint] of catalog.constraints) {
    if (constraint.table !== oldTable || !/_(pkey|foreign|natural_key)$/.test(name) || rename(name) === name) continue
    statements.push(`alter table ${quoteIdentifier(newTable)} rename constraint ${quoteIdentifier(name)} to ${quoteIdentifier(rename(name))}`)
  }
  for (const [name, index] of catalog.indexes) {
    if (index.table !== oldTable || index.constraint || index.comment !== MANAGED_COMMENT || rename(name) === name) continue
    statements.push(`alter index ${quoteIdentifier(name)} rename to ${quoteIdentifier(rename(name))}`)
  }
  return statements
}

async function readCatalog(client: pg.Client): Promise<Catalog> {
  // One after another: a pg.Client runs one statement at a time anyway.
  const tables = await client.query<{ name: string; comment: string | null }>(
      `select c.relname as name, obj_description(c.oid, 'pg_class') as comment
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind = 'r'`,
  )
  const columns = await client.query<{ table: string; column: string }>(
    `select table_name as table, column_name as column from information_schema.columns where table_schema = 'public'`,
  )
  const indexes = await client.query<{ name: string; table: string; comment: string | null; constraint: boolean }>(
      `select i.relname as name, t.relname as table, obj_description(i.oid, 'pg_class') as comment,
              exists (select 1 from pg_constraint k where k.conindid = i.oid and k.conrelid = t.oid) as constraint
         from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
         join pg_namespace n on n.oid = t.relnamespace
        where n.nspname = 'public'`,
  )
  const constraints = await client.query<{ name: string; table: string }>(
      `select k.conname as name, t.relname as table from pg_constraint k
         join pg_class t on t.oid = k.conrelid join pg_namespace n on n.oid = t.relnamespace
        where n.nspname = 'public' and k.contype in ('p', 'u', 'f', 'c')`,
  )
  const byTable = new Map<string, Set<string>>()
  for (const { table, column } of columns.rows) byTable.set(table, (byTable.get(table) ?? new Set()).add(column))
  return {
    tables: new Map(tables.rows.map((row) => [row.name, row.comment])),
    columns: byTable,
    indexes: new Map(indexes.rows.map((row) => [row.name, { table: row.table, comment: row.comment, constraint: row.constraint }])),
    constraints: new Map(constraints.rows.map((row) => [row.name, { table: row.table }])),
  }
}

async function lossOf(client: pg.Client, statement: string, declared: ReadonlySet<string>): Promise<string[]> {
  const column = DROP_COLUMN.exec(statement)
  // The search column holds nothing of its own: PostgreSQL computes it from the row again.
  if (column?.[2] === SEARCH_COLUMN) return []
  if (column) {
    const rows = await countRows(client, column[1], column[2])
    return rows > 0 ? [`column "${column[1]}"."${column[2]}" with ${rows} values would be dropped`] : []
  }
  const altered = ALTER_TYPE.exec(statement)
  if (altered) {
    const rows = await countRows(client, altered[1], altered[2])
    return rows > 0 ? [`column "${altered[1]}"."${altered[2]}" with ${rows} values would change type (${statement.slice(altered[0].length - 5)})`] : []
  }
  const table = DROP_TABLE.exec(statement)
  if (table && declared.has(table[1])) return [`table "${table[1]}" would be recreated`]
  return []
}

/** Rows of the table, or those where `column` has a value. */
async function countRows(client: pg.Client, table: string, column?: string): Promise<number> {
  const where = column ? ` where ${quoteIdentifier(column)} is not null` : ''
  const { rows } = await client.query<{ n: string }>(`select count(*) as n from ${quoteIdentifier(table)}${where}`)
  return Number(rows[0].n)
}
