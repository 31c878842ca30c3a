// MikroORM 7 formats every value of its own statements into the SQL text, escaped. We keep
// values out of SQL text everywhere (the project's rule, and it lets PostgreSQL see one
// statement shape instead of one text per value): this driver sends MikroORM's statements
// with their values as bind parameters. It reads placeholders exactly as MikroORM's own
// formatter does (`?` a value, `??` an identifier, `\?` a literal question mark).

import { CompiledQuery } from 'kysely'
import { isRaw, type Configuration, type Transaction } from '@mikro-orm/core'
import { PostgreSqlConnection, PostgreSqlDriver } from '@mikro-orm/postgresql'
import { SqlParameters } from './sql-parameters.ts'

interface NativeQuery {
  readonly text: string
  readonly values: unknown[]
}

/**
 * `select … where "Guid" in (?) and "_Version" = ?` with [['a','b'], 3] → `… in ($1, $2) and … = $3`.
 * A raw fragment among the values is translated into the same collector, so its placeholders
 * continue the statement's numbering.
 */
export function toNativeQuery(sql: string, params: readonly unknown[], quoteIdentifier: (id: string) => string, collector = new SqlParameters()): NativeQuery {
  let text = ''
  let next = 0
  const bind = (value: unknown): string => {
    if (isRaw(value)) return toNativeQuery(value.sql, value.params, quoteIdentifier, collector).text
    if (Array.isArray(value)) return value.map(bind).join(', ')
    if (value !== null && typeof value === 'object' && !(value instanceof Date) && !ArrayBuffer.isView(value)) return collector.add(JSON.stringify(value))
    return collector.add(typeof value === 'bigint' ? value.toString() : value)
  }
  let pos = 0
  while (pos < sql.length) {
    const at = sql.indexOf('?', pos)
    if (at === -1) {
      text += sql.slice(pos)
      break
    }
    if (at > 0 && sql[at - 1] === '\\') {
      text += `${sql.slice(pos, at - 1)}?`
      pos = at + 1
    } else if (sql[at + 1] === '?') {
      text += sql.slice(pos, at) + quoteIdentifier(String(params[next++]))
      pos = at + 2
    } else {
      text += sql.slice(pos, at) + bind(params[next++])
      pos = at + 1
    }
  }
  return { text, values: collector.values }
}

class ParameterisedConnection extends PostgreSqlConnection {
  override async execute(query: any, params: any = [], method: 'all' | 'get' | 'run' = 'all', ctx?: Transaction, loggerContext?: any): Promise<any> {
    await this.ensureConnection()
    const prepared = (this as any).prepareQuery(query, params)
    const native = toNativeQuery(prepared.query as string, prepared.params as unknown[], (id) => this.platform.quoteIdentifier(id))
    const sql = this.getSql(prepared.query as string, prepared.formatted, loggerContext)
    return this.executeQuery(
      sql,
      async () => {
        const result = await ((ctx as any) ?? this.getClient()).executeQuery(CompiledQuery.raw(native.text, native.values))
        return this.transformRawResult(result, method)
      },
      { ...prepared, ...loggerContext },
    )
  }
}

export class ParameterisedPostgreSqlDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config)
    ;(this as any).connection = new ParameterisedConnection(this.config)
  }
}
