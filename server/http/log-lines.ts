// Where the server's log lines go: stdout, a few kilobytes per write.
//
// pino's destination (sonic-boom) does the writing: partial writes, EAGAIN on a full pipe,
// flushing on stop. The batching happens here because sonic-boom's own (`minLength`)
// re-measures its whole pending buffer on every line, about 6% of the server's CPU under a
// load of key lookups; keeping the lines in an array and joining them once per batch costs
// next to nothing.
// Lines wait at most until the next `writePending` (start.ts calls it every second) or
// `flush` (on stop: the lines are written and synced).

import pino from 'pino'

type Destination = ReturnType<typeof pino.destination>

export class LogLines {
  readonly #destination: Destination
  readonly #batchChars: number
  #pending: string[] = []
  #size = 0

  // minLength 1: sonic-boom's flush waits only for writes in flight when minLength is set.
  constructor(destination: Destination = pino.destination({ sync: false, minLength: 1 }), batchChars = 4096) {
    this.#destination = destination
    this.#batchChars = batchChars
  }

  /** pino calls this with each serialised line. */
  write(line: string): void {
    this.#pending.push(line)
    this.#size += line.length
    if (this.#size >= this.#batchChars) this.writePending()
  }

  /**
   * Hands the pending lines to the destination, nothing more. pino's `logger.flush()` would
   * also fsync the file (sonic-boom does when given a callback, and pino always gives one):
   * a disk sync every second for lines that only need to be written.
   */
  writePending(): void {
    if (this.#size === 0) return
    this.#destination.write(this.#pending.join(''))
    this.#pending = []
    this.#size = 0
  }

  /** pino's `logger.flush(cb)` lands here: everything pending is written and synced, then `done` runs. */
  flush(done?: (error?: Error) => void): void {
    this.writePending()
    this.#destination.flush(done)
  }
}
