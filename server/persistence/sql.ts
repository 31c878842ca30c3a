// Plain parameterised SQL on whatever holds the connection: the tenant's pool (each statement
// its own transaction) or one client inside a transaction (a workflow, an admin command).
// The read path, the unit of work and the subsystems with tables of their own all speak it.

import { createHash } from 'node:crypto'
import type pg from 'pg'
import { isLostConnection } from './database-errors.ts'

/**
 * An identifier in double quotes (names come from the model or validated configuration, never
 * a request). Remembered: a write statement quotes dozens of names, 5 µs of a W2 write when
 * each was quoted anew.
 */
export function quoteIdentifier(name: string): string {
  let quoted = quotedIdentifiers.get(name)
  if (quoted === undefined) {
    quoted = `"${name.replaceAll('"', '""')}"`
    if (quotedIdentifiers.size > 10_000) quotedIdentifiers.clear()
    quotedIdentifiers.set(name, quoted)
  }
  return quoted
}

const quotedIdentifiers = new Map<string, string>()

/** Runs one statement; rows as PostgreSQL returns them. */
export type Sql = <T = Record<string, unknown>>(text: string, params?: readonly unknown[]) => Promise<T[]>

/** A statement's name and text, shared by every run of it (see preparedSql). */
type Statement = { readonly name: string; readonly text: string }

const statements = new Map<string, Statement>()

function statementOf(text: string): Statement {
  let statement = statements.get(text)
  if (!statement) {
    statement = { name: `q${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`, text }
    if (statements.size > 5000) statements.clear()
    statements.set(text, statement)
  }
  return statement
}

/** Names a statement by its text, so identical query shapes share one prepared plan. */
export function statementName(text: string): string {
  return statementOf(text).name
}

/**
 * Statements as named prepared statements, so PostgreSQL plans each shape once per
 * connection (the pool recycles connections after `maxUses`, bounding what they keep).
 *
 * pg copies every query config it is given, property by property through their descriptors
 * (`cloneQueryConfig`): 2 µs a query in a loop, 10 µs amid a key read's work, 7% of its CPU.
 * A config with no properties of its own, inheriting name and text from the statement's shared
 * object, copies for next to nothing; the values are added to the copy (`query(config, values)`).
 */
export function preparedSql(client: pg.Pool | pg.PoolClient): Sql {
  return async <T>(text: string, params: readonly unknown[] = []) => {
    const config = Object.create(statementOf(text)) as pg.QueryConfig
    const result = await client.query(config, params as unknown[])
    return result.rows as T[]
  }
}

/** Statements sent as they are: for DDL, transaction control and one-off administration. */
export function plainSql(client: pg.Pool | pg.PoolClient): Sql {
  return async <T>(text: string, params: readonly unknown[] = []) => (await client.query(text, params as unknown[])).rows as T[]
}

/**
 * One transaction on a pooled connection; rolled back when `work` throws. A connection whose
 * rollback failed (it broke, or is still inside the transaction) is destroyed, not pooled.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query('begin')
    const result = await work(client)
    await client.query('commit')
    return result
  } catch (error) {
    // A lost connection cannot roll back; one that could is destroyed all the same.
    if (isLostConnection(error)) broken = error as Error
    else await client.query('rollback').catch((failed: Error) => (broken = failed))
    throw error
  } finally {
    client.release(broken)
  }
}
