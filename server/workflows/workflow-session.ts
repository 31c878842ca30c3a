// The Session of one request inside a workflow (persistence/session.ts): every read and
// write runs on the workflow's transaction, so it sees what the workflow's earlier requests
// did, and nothing of it outlives the request unless the commit says so. Each unit of work
// gets a fresh EntityManager on that transaction, pinned to the request's clock and Guids
// (persistence/unit-pins.ts), and reports the rows it changes with the version it found.

import { CompiledQuery } from 'kysely'
import { ChangeSetType, type FlushEventArgs, type UnitOfWork } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Session } from '../persistence/session.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { newGuid } from '../persistence/guid.ts'
import { pinUnit } from '../persistence/unit-pins.ts'
import { VERSION_COLUMN } from '../model/model.ts'
import type { Sql, Touch } from './workflow-store.ts'

const CHANGES = new Set<string>([ChangeSetType.UPDATE, ChangeSetType.DELETE, ChangeSetType.UPDATE_EARLY, ChangeSetType.DELETE_EARLY])

/** Statements on the transaction of `tx`, with PostgreSQL's own $1 placeholders. */
export function sqlOn(tx: EntityManager): Sql {
  return async <T>(text: string, params: readonly unknown[] = []) => {
    const result = await tx.getKysely().executeQuery(CompiledQuery.raw(text, [...params]))
    return result.rows as T[]
  }
}

export class WorkflowSession implements Session {
  readonly tenant: TenantDatabase
  /** The clock of this request's rules: now when first run, the stored instant when replayed. */
  readonly at: Date
  /** The Guids this request generated, in order. */
  readonly guids: string[] = []
  /** The rows this request changed or deleted, keyed `Entity(key)`, with the version each had before. */
  readonly touched = new Map<string, Touch>()
  readonly #tx: EntityManager
  readonly #sql: Sql
  readonly #replayedGuids: string[]

  /** `replay`: the clock and Guids of the request's first run, to write exactly what it wrote. */
  constructor(tenant: TenantDatabase, tx: EntityManager, replay?: { at: Date; guids: readonly string[] }) {
    this.tenant = tenant
    this.#tx = tx
    this.#sql = sqlOn(tx)
    this.at = replay?.at ?? new Date()
    this.#replayedGuids = [...(replay?.guids ?? [])]
  }

  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]> {
    return this.#sql<T>(sql, params)
  }

  write<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    const em = this.#unitOfWork()
    em.getEventManager().registerSubscriber({ onFlush: ({ uow }: FlushEventArgs) => this.#recordTouched(uow) })
    return this.#inSavepoint(async () => {
      const result = await work(em)
      await em.flush()
      return result
    }, 'release')
  }

  /** A read-only unit of work: whatever it does is rolled back. */
  read<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    const em = this.#unitOfWork()
    return this.#inSavepoint(() => work(em), 'rollback')
  }

  #unitOfWork(): EntityManager {
    const em = this.#tx.fork({ clear: true, keepTransactionContext: true, cloneEventManager: true })
    pinUnit(em, { now: this.at, newGuid: () => this.#nextGuid() })
    return em
  }

  #nextGuid(): string {
    const guid = this.#replayedGuids.shift() ?? newGuid(this.at.getTime())
    this.guids.push(guid)
    return guid
  }

  /** onFlush: the change sets are computed, nothing is written yet, versions are as found. */
  #recordTouched(uow: UnitOfWork): void {
    for (const change of uow.getChangeSets()) {
      if (!CHANGES.has(change.type)) continue
      const entity = change.meta.className
      const key = String(change.getPrimaryKey())
      const id = `${entity}(${key})`
      if (!this.touched.has(id)) this.touched.set(id, [entity, key, Number((change.entity as Record<string, unknown>)[VERSION_COLUMN])])
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
