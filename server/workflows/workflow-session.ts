// The Session of one request inside a workflow (persistence/session.ts): every read and
// write runs on the workflow's transaction, so it sees what the workflow's earlier requests
// did, and nothing of it outlives the request unless the commit says so. Each unit of work
// is pinned to the request's clock and Guids, and the session keeps the write plans it
// applied and the rows they changed with the version each had, so the request can be stored
// and applied again identically (workflow-rebuild.ts).

import { openUnit, readOnly, type Session, type WriteOptions } from '../persistence/session.ts'
import type { Sql } from '../persistence/sql.ts'
import type { FlushedRow, UnitOfWork, WrittenRow } from '../persistence/unit-of-work.ts'
import { newGuid } from '../persistence/guid.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import type { WritePlan } from '../writes/write-plan.ts'
import type { Touch } from './workflow-store.ts'

export class WorkflowSession implements Session {
  readonly tenant: TenantDatabase
  /** The clock of this request's rules. */
  readonly at: Date
  /** The Guids this request's writes generated, in order. */
  readonly guids: string[] = []
  /** The rows this request changed or deleted, keyed `Entity(key)`, with the version each had before. */
  readonly touched = new Map<string, Touch>()
  /** The write plans this request applied, in order. */
  readonly plans: WritePlan[] = []
  /** The rows its writes wrote, in order, with their values: what the next request puts back. */
  readonly rows: FlushedRow[] = []
  readonly #sql: Sql
  /** Its writes stay pending (a workflow's request: rolled back, stored), not committed (a $batch change set). */
  readonly #pending: boolean

  constructor(tenant: TenantDatabase, sql: Sql, options: { readonly pending?: boolean } = {}) {
    this.tenant = tenant
    this.#sql = sql
    this.#pending = options.pending ?? false
    this.at = new Date()
  }

  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]> {
    return this.#sql<T>(sql, params)
  }

  write<T>(work: (unit: UnitOfWork) => Promise<T>, options: WriteOptions<T> = {}): Promise<T> {
    // Only a plan can be applied again: a write without one has no place in a workflow.
    const { plan, within } = options
    if (!plan) throw new Error('a write inside a workflow must come as a write plan')
    const written: WrittenRow[] = []
    const flushed: FlushedRow[] = []
    const guids: string[] = []
    const unit = this.#unitOfWork(written, flushed, guids)
    return this.#inSavepoint(async () => {
      const result = await work(unit)
      await unit.flush()
      await within?.(this, result)
      // Only now is the write the request's: one undone after its flush (its reply failed, in a
      // $batch that goes on) leaves no rows for the next request to put back, and no Guids for
      // the commit to give the plans after it.
      this.plans.push(plan)
      this.guids.push(...guids)
      this.#recordTouched(written)
      this.rows.push(...flushed)
      return result
    }, 'release')
  }

  /** A read-only unit of work: whatever it does is rolled back. */
  read<T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T> {
    return this.#inSavepoint(() => readOnly(this.#unitOfWork([], [], []), work), 'rollback')
  }

  #unitOfWork(written: WrittenRow[], flushed: FlushedRow[], guids: string[]): UnitOfWork {
    return openUnit(this.tenant, this.#sql, {
      pins: {
        now: this.at,
        newGuid: () => {
          const guid = newGuid(this.at.getTime())
          guids.push(guid)
          return guid
        },
      },
      onWrite: (rows) => written.push(...rows),
      onFlush: (rows) => flushed.push(...rows),
      pending: this.#pending,
    })
  }

  #recordTouched(rows: readonly WrittenRow[]): void {
    for (const row of rows) {
      const id = `${row[0]}(${row[1]})`
      if (!this.touched.has(id)) this.touched.set(id, row)
    }
  }

  /** A unit of work is atomic inside the workflow's transaction, as it is on its own. */
  async #inSavepoint<T>(work: () => Promise<T>, end: 'release' | 'rollback'): Promise<T> {
    await this.#sql('savepoint workflow_unit')
    let result: T
    try {
      result = await work()
    } catch (error) {
      await this.#sql('rollback to savepoint workflow_unit').catch(() => {})
      throw error
    }
    await this.#sql(end === 'release' ? 'release savepoint workflow_unit' : 'rollback to savepoint workflow_unit')
    return result
  }
}
