// COPY ... FROM STDIN for node-postgres without pg-copy-streams: a "submittable" query that, once
// PostgreSQL answers CopyInResponse, streams a file as CopyData messages and ends with CopyDone.
// PostgreSQL parses the CSV itself, so no row ever exists as a JavaScript object: this is the
// fastest load path that needs neither psql nor another package.
//
// It relies on the Connection methods pg-copy-streams uses (sendCopyFromChunk, endCopyFrom,
// sendCopyFail), stable across pg 8.x. If a pg upgrade breaks it, install pg-copy-streams instead.
import { createReadStream } from 'node:fs'
import { once } from 'node:events'
import type { Connection } from 'pg'
import type pg from 'pg'

type CopyConnection = Connection & {
  query(text: string): void
  sendCopyFromChunk(chunk: Buffer): void
  endCopyFrom(): void
  sendCopyFail(message: string): void
}

/** Runs `copySql` (a `COPY "T" (...) FROM STDIN ...` statement) with the file as its input. */
export function copyFromFile(client: pg.ClientBase, copySql: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let failure: Error | undefined
    let rows = 0
    const submittable = {
      submit(connection: CopyConnection) {
        connection.query(copySql)
      },
      handleCopyInResponse(connection: CopyConnection) {
        streamFile(connection, file, () => failure !== undefined).catch((error: Error) => {
          failure ??= error
          connection.sendCopyFail(error.message)
        })
      },
      handleCommandComplete(message: { text: string }) {
        rows = Number(message.text.split(' ')[1] ?? 0)
      },
      handleError(error: Error) {
        failure ??= error
        // A server error is followed by ReadyForQuery; a broken connection is not.
        if (!('severity' in error)) reject(error)
      },
      handleReadyForQuery() {
        if (failure) reject(failure)
        else resolve(rows)
      },
      // The client calls these for other query kinds; a COPY FROM never receives them.
      handleRowDescription() {},
      handleDataRow() {},
      handleEmptyQuery() {},
      handlePortalSuspended() {},
      handleCopyData() {},
    }
    client.query(submittable as never)
  })
}

async function streamFile(connection: CopyConnection, file: string, stopped: () => boolean): Promise<void> {
  const socket = connection.stream
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 18 })) {
    // After an ErrorResponse PostgreSQL drops whatever copy data follows: stop reading.
    if (stopped()) return
    connection.sendCopyFromChunk(chunk as Buffer)
    if (socket.writableNeedDrain) await once(socket, 'drain')
  }
  connection.endCopyFrom()
}
