// A read statement fetched a batch of rows at a time, so a large answer never sits whole in
// PostgreSQL's output or in Node: the statement runs on a connection of its own from the
// pool, through a portal (extended protocol: Bind, then Execute with a row limit and Flush,
// again after each PortalSuspended), as the same named prepared statement preparedSql would
// use. The caller asks for the next batch when it has written the last one; close() stops
// the statement where it is (Close of the portal, Sync) and gives the connection back once
// PostgreSQL has said it is ready again. A statement known to return at most one batch runs
// as a plain query (Execute and Sync in one write): one round trip, as before.
//
// pg's Query does the protocol (parse once per connection, bind, describe); this subclass
// changes only what it does with rows and at PortalSuspended: hand them over and wait.

import type { EventEmitter } from 'node:events'
import pg from 'pg'
import { statementName } from './sql.ts'
import type { TakenConnection } from './request-connection.ts'

/** A row as text: the read statements' columns are text, numbers and booleans ('t'/'f'). */
export type TextRow = Readonly<Record<string, string | null>>

export interface RowBatch {
  readonly rows: readonly TextRow[]
  /** The statement has no more rows (and its connection is on its way back to the pool). */
  readonly done: boolean
  /** The batch's text passed the cursor's byte limit: the rows after that were dropped. */
  readonly over?: boolean
}

export interface CursorLimits {
  /** Rows per Execute: every answer of up to this many rows is one batch. */
  readonly batchRows: number
  /**
   * The most rows the statement can return, when known. Within one batch, the statement runs
   * as a plain one (Execute and Sync together): one round trip, no portal to come back to.
   */
  readonly rowsAtMost?: number
  /** Most characters of row text one batch keeps in memory. */
  readonly maxBytes: number
}

export interface RowCursor {
  /** The next batch of rows; the first call runs the statement. */
  next(): Promise<RowBatch>
  /** Stops the statement if it still runs; safe to call at any time, and more than once. */
  close(): void
}

interface Waiter {
  resolve(batch: RowBatch): void
  reject(error: Error): void
}

/** The pg Connection as this file uses it (pg does not type it). */
interface Connection {
  execute(message: { portal: string; rows: number }): void
  flush(): void
  sync(): void
  close(message: { type: 'P'; name: string }): void
}

class PortalQuery extends pg.Query {
  readonly #limits: CursorLimits
  /** Execute with a row limit and Flush, again at each PortalSuspended; else Execute and Sync at once. */
  readonly #batching: boolean
  #columns: string[] = []
  #rows: TextRow[] = []
  #bytes = 0
  #over = false
  #waiter: Waiter | undefined
  /** What arrived while nobody waited: a batch, or the error that ended the statement. */
  #ready: RowBatch | Error | undefined
  /** Set at PortalSuspended until the next Execute or the Close. */
  #suspended: Connection | undefined
  #finished = false
  #closing = false

  constructor(text: string, values: readonly unknown[], limits: CursorLimits) {
    const batching = limits.rowsAtMost === undefined || limits.rowsAtMost > limits.batchRows
    super({ name: statementName(text), text, values: values as unknown[], rows: batching ? limits.batchRows : undefined } as pg.QueryConfig)
    this.#limits = limits
    this.#batching = batching
  }

  next(): Promise<RowBatch> {
    const ready = this.#ready
    if (ready instanceof Error) return Promise.reject(ready)
    if (ready) {
      this.#ready = undefined
      return Promise.resolve(ready)
    }
    if (this.#finished) return Promise.resolve({ rows: [], done: true })
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject }
      const connection = this.#suspended
      if (connection) {
        this.#suspended = undefined
        connection.execute({ portal: '', rows: this.#limits.batchRows })
        connection.flush()
      }
    })
  }

  close(): void {
    this.#closing = true
    const connection = this.#suspended
    if (!connection || this.#finished) return
    this.#suspended = undefined
    this.#finished = true
    connection.close({ type: 'P', name: '' })
    connection.sync()
  }

  // The hooks pg's Client calls with the messages of the statement.

  handleRowDescription(message: { fields: { name: string }[] }): void {
    this.#columns = message.fields.map((field) => field.name)
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.#over) return
    const row: Record<string, string | null> = {}
    for (let i = 0; i < this.#columns.length; i++) {
      const field = message.fields[i]
      row[this.#columns[i]] = field
      if (field) this.#bytes += field.length
    }
    // The rest of a batch too large to keep is dropped as it arrives, not held.
    if (this.#bytes > this.#limits.maxBytes) this.#over = true
    else this.#rows.push(row)
  }

  handlePortalSuspended(connection: Connection): void {
    if (this.#closing) {
      this.#finished = true
      connection.close({ type: 'P', name: '' })
      connection.sync()
      // Closed while this batch was being fetched: whoever waits for it is told it is over.
      this.#take(true)
      this.#deliver({ rows: [], done: true })
      return
    }
    this.#suspended = connection
    this.#deliver(this.#take(false))
  }

  handleCommandComplete(_message: unknown, connection: Connection): void {
    this.#finished = true
    if (this.#batching) connection.sync()
    this.#deliver(this.#take(true))
  }

  handleEmptyQuery(connection: Connection): void {
    this.handleCommandComplete(undefined, connection)
  }

  handleError(error: Error, connection: Connection): void {
    // An error of the statement (not of the connection) leaves PostgreSQL skipping messages
    // until a Sync, which a portal read has not sent yet.
    if (this.#batching && !this.#finished && isStatementError(error)) connection.sync()
    this.#finished = true
    this.#suspended = undefined
    this.#deliver(error)
    this.emit('failed', error)
  }

  handleReadyForQuery(): void {
    this.emit('end')
  }

  #take(done: boolean): RowBatch {
    const batch = { rows: this.#rows, done, over: this.#over }
    this.#rows = []
    this.#bytes = 0
    return batch
  }

  #deliver(outcome: RowBatch | Error): void {
    const waiter = this.#waiter
    this.#waiter = undefined
    if (!waiter) {
      this.#ready = outcome
      return
    }
    if (outcome instanceof Error) waiter.reject(outcome)
    else waiter.resolve(outcome)
  }
}

/**
 * Opens `text` on a connection of `pool`; the connection goes back when the statement is done,
 * closed or failed (dropped when it failed for another reason than the statement itself).
 */
/**
 * Opens the cursor on a connection `take` provides (request-connection.ts: the request's lane,
 * cancelled when its client leaves), given back when the statement is over or closed.
 */
export async function openRowCursor(take: () => Promise<TakenConnection>, text: string, values: readonly unknown[], limits: CursorLimits): Promise<RowCursor> {
  const taken = await take()
  const query = new PortalQuery(text, values, limits)
  query.on('end', () => taken.release())
  ;(query as EventEmitter).on('failed', (error: Error) => taken.release(isStatementError(error) ? undefined : error))
  taken.client.query(query)
  return query
}

/** An error PostgreSQL reported for the statement; the connection itself is fine. */
function isStatementError(error: Error): boolean {
  return (error as { severity?: string }).severity === 'ERROR'
}
