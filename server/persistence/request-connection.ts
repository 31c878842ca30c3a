// How a request holds a connection of its tenant's pool: taken in its lane (a heavy read
// waits for a heavy slot first, tenancy/heavy-read-lane.ts), within the acquisition timeout;
// its running statement cancelled in PostgreSQL when the client goes away; and given back
// only when it is sound: a connection that broke, or whose statement was cancelled, is
// destroyed, never returned to the pool.

import { connect } from 'node:net'
import type pg from 'pg'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { isLostConnection } from './database-errors.ts'
import { PLANNED_FOR_VALUES, PLANNED_FOR_VALUES_END } from './plan-choice.ts'

export interface ConnectionOptions {
  /** Aborted when the client has gone: waiting stops, a running statement is cancelled. */
  readonly signal?: AbortSignal
  /** A heavy read: takes one of the tenant's heavy slots before its connection. */
  readonly heavy?: boolean
  /**
   * The statement shape (its prepared statement's name) of the one read the connection is
   * taken for: planned as the tenant's plan choice says, and timed for it (plan-choice.ts).
   */
  readonly shape?: string
}

/** A connection taken for a request, to give back once, whatever happened. */
export interface TakenConnection {
  readonly client: pg.PoolClient
  /**
   * Gives the connection back, or destroys it: when `broken` is given, or when its statement
   * was cancelled because the client went away. Safe to call more than once.
   */
  release(broken?: Error): void
}

/** Takes one connection of the tenant's pool as described above; the caller releases it. */
export async function takeConnection(tenant: TenantDatabase, options: ConnectionOptions): Promise<TakenConnection> {
  const { signal } = options
  signal?.throwIfAborted()
  const leaveLane = options.heavy ? await tenant.heavyReads.enter(tenant.acquireTimeoutMs, signal) : undefined
  let client: pg.PoolClient
  try {
    // The pool's own connectionTimeoutMillis bounds this wait (translated to a 503).
    client = await tenant.pool.connect()
  } catch (error) {
    leaveLane?.()
    throw error
  }
  let cancelled = false
  const cancel = () => {
    cancelled = true
    void cancelStatement(client)
  }
  signal?.addEventListener('abort', cancel, { once: true })
  let released = false
  const taken: TakenConnection = {
    client,
    release(broken) {
      if (released) return
      released = true
      signal?.removeEventListener('abort', cancel)
      // After a cancel request the backend may still receive it later, during whatever statement
      // the connection ran next for someone else: such a connection is not reused.
      client.release(broken ?? (cancelled ? new Error('statement cancelled: the client went away') : undefined))
      leaveLane?.()
    },
  }
  return options.shape && tenant.plans.on ? plannedFor(taken, tenant, options.shape, signal) : taken
}

/**
 * `taken` set up for one read of `shape`: in a transaction that plans for the statement's
 * values when the tenant's choice says so, ended before the connection returns to the pool,
 * so no other statement runs with that choice. The read is timed until it is given back, and
 * its time divided by the statements of the tenant running beside it (the larger count of its
 * start and its end, its own included): PostgreSQL shares its CPUs between them, and under
 * load a quick shape must not pass for a slow one. A read whose client went away is not timed:
 * its statement was cancelled, and a slow shape would pass for quick.
 */
async function plannedFor(taken: TakenConnection, tenant: TenantDatabase, shape: string, signal?: AbortSignal): Promise<TakenConnection> {
  const plans = tenant.plans
  const running = () => tenant.pool.totalCount - tenant.pool.idleCount
  const custom = plans.custom(shape)
  if (custom) {
    try {
      await taken.client.query(PLANNED_FOR_VALUES)
    } catch (error) {
      taken.release(error as Error)
      throw error
    }
  }
  const started = performance.now()
  const runningAtStart = running()
  let released = false
  return {
    client: taken.client,
    release(broken) {
      if (released) return
      released = true
      if (!signal?.aborted) plans.ran(shape, (performance.now() - started) / Math.max(1, runningAtStart, running()), custom)
      if (!custom || broken) return taken.release(broken)
      taken.client.query(PLANNED_FOR_VALUES_END).then(() => taken.release(), (error: Error) => taken.release(error))
    },
  }
}

/** Runs `work` on one connection of the tenant's pool, taken and given back as described above. */
export async function withConnection<T>(tenant: TenantDatabase, options: ConnectionOptions, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const taken = await takeConnection(tenant, options)
  let broken: Error | undefined
  try {
    if (options.signal?.aborted) throw options.signal.reason
    return await work(taken.client)
  } catch (error) {
    if (isLostConnection(error)) broken = error as Error
    throw error
  } finally {
    taken.release(broken)
  }
}

/**
 * Asks PostgreSQL to cancel what the connection is running: the protocol's CancelRequest
 * (its process id and secret key) on a connection of its own, which the server closes at
 * once; it takes no connection slot and needs no free connection of the pool. Never throws.
 */
export function cancelStatement(client: pg.ClientBase): Promise<void> {
  const target = client as unknown as { processID: number | null; secretKey: number | null; host: string; port: number }
  if (target.processID === null || target.secretKey === null) return Promise.resolve()
  return new Promise((resolve) => {
    const socket = target.host.startsWith('/') ? connect(`${target.host}/.s.PGSQL.${target.port}`) : connect(target.port, target.host)
    socket.setTimeout(5_000, () => socket.destroy())
    socket.once('connect', () => {
      const request = Buffer.alloc(16)
      request.writeInt32BE(16, 0)
      request.writeInt32BE(80877102, 4) // the CancelRequest code
      request.writeInt32BE(target.processID!, 8)
      request.writeInt32BE(target.secretKey!, 12)
      socket.end(request)
    })
    socket.once('error', () => socket.destroy())
    socket.once('close', () => resolve())
  })
}
