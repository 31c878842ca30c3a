// The connections of one instance over all its tenant pools, within Database:MaxConnections
// (less the notification connections, auth/access-listener.ts). Each pool may hold up to
// PoolSizePerTenant connections, but only while the instance as a whole has room: a new
// connection takes a permit and its end gives it back. With none free, the registry closes
// the least recently used tenant that no request holds (its idle connections end and give
// theirs back); otherwise the new connection waits for one, within the pool's acquisition
// timeout. So any number of tenants can be busy at once: the bound is on connections, not on
// open tenants.

import pg from 'pg'

export class ConnectionBudget {
  readonly size: number
  #free: number
  #waiting: (() => void)[] = []
  readonly #makeRoom: () => void

  /** `makeRoom` closes a tenant nobody holds, if there is one. */
  constructor(size: number, makeRoom: () => void) {
    this.size = size
    this.#free = size
    this.#makeRoom = makeRoom
  }

  /** Permits no connection holds. */
  get free(): number {
    return this.#free
  }

  /** New connections waiting for a permit now (for the metrics). */
  get waiting(): number {
    return this.#waiting.length
  }

  /** Connections open or opening now. */
  get used(): number {
    return this.size - this.#free
  }

  /** Waits for a permit; rejects after `timeoutMs` (0: waits as long as it takes). */
  async take(timeoutMs: number): Promise<void> {
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity
    while (this.#free <= 0) {
      this.#makeRoom()
      const left = deadline - Date.now()
      // pg-pool's words for the same wait, so it is answered alike (503, persistence/database-errors.ts).
      if (left <= 0) throw new Error('timeout exceeded when trying to connect')
      await new Promise<void>((resolve) => {
        const timer = left === Infinity ? undefined : setTimeout(resolve, left)
        this.#waiting.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    this.#free--
    // The last permit taken: close an idle tenant now, so the next connection finds one free
    // rather than wait for a close.
    if (this.#free === 0) this.#makeRoom()
  }

  give(): void {
    this.#free++
    this.wake()
  }

  /** Lets waiters look again: a permit came back, or a tenant became closable. */
  wake(): void {
    const waiting = this.#waiting
    this.#waiting = []
    for (const resolve of waiting) resolve()
  }
}

/**
 * Puts a pool under the budget. A new connection takes a permit (budgetedClient). And a pool
 * that has connections does not ask for another while no permit is free: pg-pool binds the
 * request that made it start a connection to that connection, so the request would wait for
 * a permit while a connection of its own pool fell idle. pg-pool reads `options.max` at every
 * checkout (its _isFull), so a getter makes it follow the budget; the tenant-registry tests
 * fail if a pg-pool release stops reading it so.
 */
export function underBudget(pool: pg.Pool, budget: ConnectionBudget, poolSize: number): void {
  Object.defineProperty((pool as unknown as { options: object }).options, 'max', {
    get: () => (pool.totalCount === 0 ? poolSize : Math.min(poolSize, pool.totalCount + budget.free)),
  })
}

/**
 * A pg Client class for a pool under the budget: connecting takes a permit first, the
 * connection's end (or a failed connect) gives it back, once.
 */
export function budgetedClient(budget: ConnectionBudget, timeoutMs: number): typeof pg.Client {
  return class BudgetedClient extends pg.Client {
    override connect(): Promise<pg.Client>
    override connect(callback: (err: Error) => void): void
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | undefined {
      let given = false
      const giveBack = () => {
        if (given) return
        given = true
        budget.give()
      }
      const connecting = budget.take(timeoutMs).then(() => {
        this.once('end', giveBack)
        return super.connect().catch((error: unknown) => {
          giveBack()
          throw error
        })
      })
      if (!callback) return connecting
      connecting.then(() => callback(undefined as unknown as Error), callback)
      return undefined
    }
  }
}
