// The body of a collection read, from the rows of its statement (sql/compile-read.ts: one row
// per entity, in order, with its size), within ApiOptions:MaxResponseBytes:
//
//   {"@odata.context":…[,"@odata.count":n],"value":[<row>,<row>,…][,"@odata.nextLink":…]}
//
// The first batch of rows decides how it is sent. When it is the whole answer (every page of
// up to BATCH_ROWS entities), the body is one string, as before. Otherwise the answer is
// streamed: what the first batch gave, then each next batch as the socket takes it (the
// statement waits on its portal meanwhile, so a slow client holds back PostgreSQL, not
// memory), then the closing characters. A client that takes nothing for a while is cut off by
// http/stalled-answer.ts, which closes the stream, and the statement with it.
//
// The budget counts the bytes PostgreSQL produces. Passed before anything was sent: 400
// QueryLimitExceeded, and the statement stops. Passed (or a failure) after the 200 went out:
// the body is cut off where it is, without its closing characters, and the connection is
// closed, as OData JSON 4.01 (21.2, in-stream error) requires of a service that finds an error
// after sending a success status: the client sees an incomplete message, never a
// well-formed partial answer.

import { Readable } from 'node:stream'
import { ServiceError } from '../../errors.ts'
import type { RowBatch, RowCursor } from '../../persistence/row-cursor.ts'
import type { Logger } from 'pino'

/** Rows fetched per round trip: every page of up to this many entities is one batch. */
export const BATCH_ROWS = 128

export interface CollectionShape {
  /** Absent with odata.metadata=none. */
  readonly context: string | undefined
  /** IEEE754Compatible=true: @odata.count (an Edm.Int64) as a string. */
  readonly countAsText?: boolean
  /** The 404 of a path whose parent entity does not exist (the statement's `missing` row). */
  parentMissing?(): Error
  readonly maxBytes: number
  /** The finished JSON of one entity (decrypted, virtual properties computed). */
  finish(body: string): string
  /** @odata.nextLink when the statement said `more`; undefined when nobody can follow it. */
  nextLink(): string | undefined
}

/** The whole body as a string, or a stream of it; throws 400 when the budget is passed before. */
export async function collectionAnswer(cursor: RowCursor, shape: CollectionShape, log: Logger, stream: boolean): Promise<string | Readable> {
  const body = new CollectionBody(shape)
  let batch: RowBatch
  try {
    batch = await cursor.next()
    while (body.add(batch) && !batch.done && !stream) batch = await cursor.next()
  } catch (error) {
    cursor.close()
    throw error
  }
  if (body.missing) {
    cursor.close()
    throw shape.parentMissing?.() ?? new Error('a parent check without its 404')
  }
  if (body.over) {
    cursor.close()
    throw tooLarge(shape.maxBytes, body.items)
  }
  if (batch.done) return body.take() + body.end()
  return streamed(body, cursor, log)
}

function streamed(body: CollectionBody, cursor: RowCursor, log: Logger): Readable {
  let first = body.take()
  const stream = new Readable({
    read() {
      if (first) {
        this.push(first)
        first = ''
        return
      }
      void pump(this)
    },
    destroy(error, callback) {
      cursor.close()
      callback(error)
    },
  })
  // One batch per call of read(): a batch that gave no text fetches the next at once.
  async function pump(readable: Readable): Promise<void> {
    try {
      for (;;) {
        const batch = await cursor.next()
        const fits = body.add(batch)
        if (!fits) {
          log.warn({ limit: 'MaxResponseBytes', items: body.items }, 'answer cut off: MaxResponseBytes passed while streaming')
          readable.destroy(tooLarge(body.maxBytes, body.items))
          return
        }
        const text = body.take() + (batch.done ? body.end() : '')
        if (batch.done) {
          readable.push(text)
          readable.push(null)
          return
        }
        if (text) {
          readable.push(text)
          return
        }
      }
    } catch (error) {
      log.error({ err: error }, 'answer cut off: the read failed while streaming')
      readable.destroy(error as Error)
    }
  }
  return stream
}

/** The text of a collection body as rows arrive, and the bytes it has used. */
class CollectionBody {
  readonly #shape: CollectionShape
  #parts: string[] = []
  #bytes = 0
  #started = false
  #more = false
  items = 0
  over = false
  missing = false

  constructor(shape: CollectionShape) {
    this.#shape = shape
  }

  get maxBytes(): number {
    return this.#shape.maxBytes
  }

  /** Adds the entities of a batch; false once the budget is passed (nothing more is added). */
  add(batch: RowBatch): boolean {
    for (const row of batch.rows) {
      if (row.missing === 't') {
        this.missing = true
        return false
      }
      if (!this.#started) this.#head(row.count)
      if (row.more === 't') this.#more = true
      if (row.size === null || row.more === 't') continue
      this.#bytes += Number(row.size) + 1
      if (row.body === null || this.#bytes > this.#shape.maxBytes) {
        this.over = true
        return false
      }
      this.#parts.push(this.items++ === 0 ? this.#shape.finish(row.body) : `,${this.#shape.finish(row.body)}`)
    }
    if (batch.over) this.over = true
    return !this.over
  }

  /** What was added since the last take. */
  take(): string {
    const text = this.#parts.join('')
    this.#parts = []
    return text
  }

  /** The closing characters (and the head, when no row came). */
  end(): string {
    if (!this.#started) this.#head(undefined)
    const next = this.#more ? this.#shape.nextLink() : undefined
    return `${this.take()}]${next ? `,"@odata.nextLink":${JSON.stringify(next)}` : ''}}`
  }

  #head(count: string | null | undefined): void {
    this.#started = true
    const { context, countAsText } = this.#shape
    const annotations = [
      ...(context !== undefined ? [`"@odata.context":${JSON.stringify(context)}`] : []),
      ...(count != null ? [`"@odata.count":${countAsText ? `"${count}"` : count}`] : []),
    ]
    const head = `{${annotations.map((annotation) => `${annotation},`).join('')}"value":[`
    this.#bytes += head.length
    this.#parts.unshift(head)
  }
}

export function tooLarge(maxBytes: number, items: number): ServiceError {
  return new ServiceError(
    'QueryLimitExceeded',
    `MaxResponseBytes is ${maxBytes}; the answer to this read is longer${items ? ` (passed after ${items} entities)` : ''}. ` +
      'Read smaller pages ($top), select fewer properties, or give the expands a $top.',
    { target: 'MaxResponseBytes' },
  )
}
