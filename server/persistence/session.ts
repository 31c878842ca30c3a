// A request's access to its tenant database. Reads run one statement on a pooled connection
// (as a named prepared statement, so PostgreSQL plans each query shape once per connection,
// unless a heavy read's shape runs long enough to be planned for its values: plan-choice.ts);
// writes run a unit of work, whose flush runs the business rules and writes everything in
// one statement (a unit that keeps losing its rows to other writers locks them: write(); one
// whose rules hold a lock until the write commits, a change of the role tree, flushes in a
// transaction; one whose rules find they must, a change other entities read through a
// reference, runs again in one).
// Connections are taken and given back by request-connection.ts: in the request's lane,
// cancelled when its client leaves. A workflow substitutes its own session, so handlers never
// know whether they run inside one.

import { setTimeout as delay } from 'node:timers/promises'
import { MethodError, RequestError } from '../errors.ts'
import { businessRules } from '../rules/apply-rules.ts'
import type { WritePlan } from '../writes/write-plan.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { plainSql, preparedSql, statementName, type Sql } from './sql.ts'
import { takeConnection, withConnection, type ConnectionOptions } from './request-connection.ts'
import { openRowCursor, type CursorLimits, type RowCursor } from './row-cursor.ts'
import { metAnotherWrite } from './database-errors.ts'
import { isRememberedRowChanged, isTransactionNeeded, UnitOfWork, type RowReadBack, type UnitOptions, type WrittenRow } from './unit-of-work.ts'

/** What a write's reply gives its flush to read (unit-of-work.ts); handlers see it here, with the session. */
export type { RowReadBack } from './unit-of-work.ts'

export interface Session {
  readonly tenant: TenantDatabase
  /** Runs one read statement; rows as PostgreSQL returns them. */
  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]>
  /**
   * Runs one read statement a batch of rows at a time (persistence/row-cursor.ts), so its
   * answer can be streamed. Absent where the answer must be kept whole (a workflow's session).
   */
  cursor?(sql: string, params: readonly unknown[], limits: CursorLimits): Promise<RowCursor>
  /** Runs `work` on a unit of work, then flushes it: the rules run, one statement writes. */
  write<T>(work: (unit: UnitOfWork) => Promise<T>, options?: WriteOptions<T>): Promise<T>
  /** A unit of work for reading entities (read-only methods); a change it makes is refused. */
  read<T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T>
}

export interface WriteOptions<T> {
  /** The write plan `work` applies, for a session that keeps them (a workflow's). */
  readonly plan?: WritePlan
  /**
   * A read that must succeed for the write to stand (a reply that can fail on the data): run
   * after the flush in the write's transaction, on a session of its own; its failure undoes
   * the write. Costs a BEGIN and a COMMIT, so only such replies ask for it.
   */
  readonly within?: (session: Session, result: T) => Promise<void>
  /**
   * A read of a row the write makes (a reply that cannot fail on the data), made by the
   * flush's own statement (unit-of-work.ts RowReadBack). A session that cannot, or a flush
   * that did not write the row, never calls its `take`: the caller reads the row itself.
   */
  readonly readBack?: (result: T) => RowReadBack | undefined
}

/**
 * How often a unit runs again when a row it read changed before its flush (optimistic
 * concurrency, persistence/unit-of-work.ts) or its statement met another in a deadlock.
 */
const MAX_ATTEMPTS = 10

/**
 * Attempts a unit makes optimistically. After that many losses it runs in a transaction that
 * first locks the rows its last flush wrote (UnitOfWork.lock): writers still running finish,
 * later ones wait, and it wins. Without it, a row that many writers feed (the order a burst
 * of 200 lines goes into) made some of them lose all ten attempts: a 409 for a valid write.
 */
const OPTIMISTIC_ATTEMPTS = 3

/**
 * The session of a request outside a workflow. `options.heavy` marks its reads as heavy
 * (odata-routes.ts decides); its writes and read units always take the cheap lane.
 */
export function poolSession(tenant: TenantDatabase, options: ConnectionOptions = {}): Session {
  const cheap: ConnectionOptions = { signal: options.signal }
  return {
    tenant,
    query: (text, params) => withConnection(tenant, planned(options, text), (client) => preparedSql(client)(text, params)),
    cursor: (text, params, limits) => openRowCursor(() => takeConnection(tenant, planned(options, text)), text, params, limits),
    async write(work, options) {
      /** The rows the last flush set out to write: after a loss, rows other writers are changing too. */
      let contended: readonly WrittenRow[] = []
      /** The rows the last flush read values from (UnitOfWork.readFrom): held, not written, by a unit that locks. */
      let contendedReads: readonly WrittenRow[] = []
      const onWrite = (rows: readonly WrittenRow[], read: readonly WrittenRow[] = []) => {
        contended = rows
        contendedReads = read
      }
      /**
       * Whether the next attempt pauses first: not when the last one lost over a row remembered
       * from an earlier write (row-cache.ts), not to a writer, nor when it must run in a transaction.
       */
      let pause = true
      /** Whether the unit's rules must hold a lock until it commits (UnitOfWork.lockForDependents): it runs in a transaction. */
      let transactional = false
      for (let attempt = 1; ; attempt++) {
        const locking = attempt > OPTIMISTIC_ATTEMPTS && contended.length + contendedReads.length > 0
        // Writers that lost the same row spread out before trying again, off their connection,
        // over a window that doubles with each loss (4 ms, 8 ms … at most 100 ms): on a loaded
        // machine a write takes tens of milliseconds, and writers retrying within a few of each
        // other collided again. One that locks waits for the rows instead.
        if (attempt > 1 && !locking && pause) await delay(Math.random() * Math.min(2 ** attempt, 100))
        try {
          // One connection for the unit's few statements: taken from the pool once, not per statement.
          return await withConnection(tenant, cheap, async (client) => {
            const sql = preparedSql(client)
            const within = options?.within
            if (!within && !locking && !transactional) {
              // Outside a transaction, loads see committed rows only: they may be remembered, and taken.
              const unit = openUnit(tenant, sql, { onWrite, remembered: tenant.remembered, autocommit: true, signal: cheap.signal })
              try {
                const result = await work(unit)
                const readBack = options?.readBack?.(result)
                if (unit.needsTransaction) await inTransaction(plainSql(client), () => unit.flush(readBack))
                else await unit.flush(readBack)
                return result
              } catch (error) {
                // A refusal that rests on remembered rows stands only while they are stored so.
                if (unit.tookRemembered && !metAnotherWrite(error) && !isTransactionNeeded(error)) await unit.checkRemembered()
                throw error
              }
            }
            const unit = openUnit(tenant, sql, { onWrite, signal: cheap.signal })
            return inTransaction(plainSql(client), async () => {
              if (locking) await unit.lock(contended, contendedReads)
              const result = await work(unit)
              await unit.flush(within ? undefined : options?.readBack?.(result))
              if (within) await within(statementSession(tenant, sql), result)
              return result
            })
          })
        } catch (error) {
          if (isTransactionNeeded(error) && !transactional) {
            transactional = true
            pause = false
            continue
          }
          if (!metAnotherWrite(error)) throw error
          pause = !isRememberedRowChanged(error)
          if (attempt === MAX_ATTEMPTS) throw RequestError.conflict(`The data changed under ${MAX_ATTEMPTS} attempts of this write by concurrent writes; send it again.`)
        }
      }
    },
    read: (work) => withConnection(tenant, cheap, (client) => readOnly(openUnit(tenant, preparedSql(client), { signal: cheap.signal }), work)),
  }
}

/** Runs `work` between BEGIN and COMMIT, or ROLLBACK when it throws. */
async function inTransaction<T>(plain: Sql, work: () => Promise<T>): Promise<T> {
  await plain('begin')
  try {
    const result = await work()
    await plain('commit')
    return result
  } catch (error) {
    await plain('rollback').catch(() => {})
    throw error
  }
}

/**
 * A heavy read's options with its statement shape, so its plan is chosen by how long the
 * shape takes (plan-choice.ts); key reads and plain pages cost the same at any size of data
 * and keep their generic plans without being timed.
 */
function planned(options: ConnectionOptions, text: string): ConnectionOptions {
  return options.heavy ? { ...options, shape: statementName(text) } : options
}

/**
 * Runs `work` in one transaction on one connection of the request's lane, and commits it when
 * `work` says so (`commit: true`); rolls it back when `work` says not to or throws. A $batch
 * atomicity group runs its parts this way: the first failed part undoes the ones before.
 */
export function atomically<T>(tenant: TenantDatabase, options: ConnectionOptions, work: (sql: Sql) => Promise<{ commit: boolean; value: T }>): Promise<T> {
  return withConnection(tenant, options, async (client) => {
    const plain = plainSql(client)
    await plain('begin')
    try {
      const { commit, value } = await work(preparedSql(client))
      await plain(commit ? 'commit' : 'rollback')
      return value
    } catch (error) {
      await plain('rollback').catch(() => {})
      throw error
    }
  })
}

/** A session for reads only, on `sql` (the connection of a write's transaction). */
function statementSession(tenant: TenantDatabase, sql: Sql): Session {
  const refuse = () => Promise.reject(new Error('a session for a write\'s reply reads only'))
  return { tenant, query: (text, params) => sql(text, params), write: refuse, read: refuse }
}

/** A unit of work on `sql` with the tenant's model, rules and encryption key. */
export function openUnit(tenant: TenantDatabase, sql: Sql, options: Pick<UnitOptions, 'pins' | 'onWrite' | 'onFlush' | 'remembered' | 'autocommit' | 'pending'> & { signal?: AbortSignal } = {}): UnitOfWork {
  const { signal, ...unitOptions } = options
  return new UnitOfWork({
    model: tenant.model,
    sql,
    rules: businessRules,
    cipher: tenant.cipher,
    plugins: { timeoutMs: tenant.pluginTimeoutMs ?? 0, signal },
    publicName: tenant.publicName,
    entityTagKey: tenant.entityTagKey,
    ...unitOptions,
  })
}

/** Runs `work` on a unit that must not change anything: nothing is flushed, a change is a 403. */
export async function readOnly<T>(unit: UnitOfWork, work: (unit: UnitOfWork) => Promise<T>): Promise<T> {
  const result = await work(unit)
  const changed = unit.entries().some((entry) => entry.state === 'new' || entry.removed || (entry.state === 'loaded' && unit.changes(entry).length > 0))
  if (changed) throw MethodError.readOnly()
  return result
}
