// A request's access to its tenant database. Reads run one statement on the pool (as a
// named prepared statement, so PostgreSQL plans each query shape once per connection);
// writes run a MikroORM unit of work in one transaction. A workflow substitutes its own
// session, so handlers never know whether they run inside one.

import { createHash } from 'node:crypto'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'

export interface Session {
  readonly tenant: TenantDatabase
  /** Runs one read statement; rows as PostgreSQL returns them. */
  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]>
  /** Runs a unit of work in a transaction; its flush runs the business rules. */
  write<T>(work: (em: EntityManager) => Promise<T>): Promise<T>
  /** A unit of work for reading entities (read-only methods); flushing it is refused. */
  read<T>(work: (em: EntityManager) => Promise<T>): Promise<T>
}

const statementNames = new Map<string, string>()

/** Names a statement by its text, so identical query shapes share one prepared plan. */
function statementName(sql: string): string {
  let name = statementNames.get(sql)
  if (!name) {
    name = `q${createHash('sha1').update(sql).digest('base64url').slice(0, 20)}`
    if (statementNames.size > 5000) statementNames.clear()
    statementNames.set(sql, name)
  }
  return name
}

export function poolSession(tenant: TenantDatabase): Session {
  return {
    tenant,
    async query<T>(sql: string, params: readonly unknown[]) {
      const result = await tenant.pool.query({ name: statementName(sql), text: sql, values: params as unknown[] })
      return result.rows as T[]
    },
    write: (work) => tenant.fork().transactional((em) => work(em as EntityManager)),
    read: (work) => readOnly(tenant.fork() as EntityManager, work),
  }
}

/** Runs work in a transaction that is always rolled back, so nothing it writes survives. */
export async function readOnly<T>(em: EntityManager, work: (em: EntityManager) => Promise<T>): Promise<T> {
  const marker = new ReadOnlyRollback()
  let result: T | undefined
  try {
    await em.transactional(async (tx) => {
      await tx.getConnection().execute('set transaction read only', [], 'run', tx.getTransactionContext())
      result = await work(tx as EntityManager)
      throw marker
    })
  } catch (error) {
    if (error !== marker) throw error
  }
  return result as T
}

class ReadOnlyRollback extends Error {}
