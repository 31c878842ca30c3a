// Brings a tenant database's schema to what the plugins declare. Additive changes apply;
// a destructive one (a table or column with data dropped, a column type narrowed) is
// refused unless confirmed, and the refusal says what would be lost.

import type { MikroORM } from '@mikro-orm/postgresql'
import type { Model } from '../model/model.ts'
import { INTERNAL_TABLES } from '../persistence/internal-tables.ts'
import { quoteIdentifier as quote } from '../persistence/sql.ts'

export interface MigrationPlan {
  /** Schema changes the plugins ask for (internal tables are ensured on every run). */
  readonly statements: readonly string[]
  /** What the destructive statements would lose, one line each. */
  readonly losses: readonly string[]
}

export class DestructiveMigrationError extends Error {
  readonly losses: readonly string[]
  constructor(tenant: string, losses: readonly string[]) {
    super(
      `Migration of tenant '${tenant}' would lose data and was not applied:\n  ${losses.join('\n  ')}\n` +
        'Run `entityctl migrate --tenant ' + tenant + ' --allow-data-loss` to apply it anyway.',
    )
    this.name = 'DestructiveMigrationError'
    this.losses = losses
  }
}

const DROP_TABLE = /^drop table (?:if exists )?"([^"]+)"/i
const DROP_COLUMN = /^alter table "([^"]+)" drop column "([^"]+)"/i
const ALTER_TYPE = /^alter table "([^"]+)" alter column "([^"]+)" type /i

export async function planMigration(orm: MikroORM, model: Model): Promise<MigrationPlan> {
  const known = new Set([...model.entities.values()].map((e) => e.table))
  const ddl = await orm.schema.getUpdateSchemaSQL({ wrap: false, dropTables: false })
  const statements = splitStatements(ddl)
  const connection = orm.em.getConnection()
  const losses: string[] = []
  // Names come from the database and MikroORM's DDL: quoted, like every identifier we write into SQL.
  const rowsOf = async (table: string, notNullColumn?: string) => {
    const where = notNullColumn === undefined ? 'true' : `${quote(notNullColumn)} is not null`
    const [row] = await connection.execute<{ n: string }[]>(`select count(*) as n from ${quote(table)} where ${where}`)
    return Number(row.n)
  }
  // Tables of entities that no plugin declares any more (internal tables start with _).
  const existing = await connection.execute<{ table_name: string }[]>(
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  )
  for (const { table_name: table } of existing) {
    if (table.startsWith('_') || table.startsWith('mikro_orm') || known.has(table)) continue
    const rows = await rowsOf(table)
    statements.push(`drop table ${quote(table)} cascade`)
    if (rows > 0) losses.push(`table "${table}" (no plugin declares it any more) with ${rows} rows would be dropped`)
  }
  for (const statement of statements) {
    const column = DROP_COLUMN.exec(statement)
    if (column) {
      const rows = await rowsOf(column[1], column[2])
      if (rows > 0) losses.push(`column "${column[1]}"."${column[2]}" with ${rows} values would be dropped`)
      continue
    }
    const altered = ALTER_TYPE.exec(statement)
    if (altered) {
      const rows = await rowsOf(altered[1], altered[2])
      if (rows > 0) losses.push(`column "${altered[1]}"."${altered[2]}" with ${rows} values would change type (${statement.slice(altered[0].length - 5)})`)
      continue
    }
    const table = DROP_TABLE.exec(statement)
    if (table && known.has(table[1])) losses.push(`table "${table[1]}" would be recreated`)
  }
  return { statements, losses }
}

export async function applyMigration(orm: MikroORM, tenant: string, plan: MigrationPlan, allowDataLoss: boolean): Promise<void> {
  if (plan.losses.length > 0 && !allowDataLoss) throw new DestructiveMigrationError(tenant, plan.losses)
  await orm.em.transactional(async (em) => {
    for (const statement of [...plan.statements, ...INTERNAL_TABLES]) await em.getConnection().execute(statement, [], 'run', em.getTransactionContext())
  })
}

function splitStatements(ddl: string): string[] {
  return ddl
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ''))
    .filter((s) => s.length > 0 && !/^set names/i.test(s))
}
