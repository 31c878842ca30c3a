// Where the server's log lines go: stdout, in batches.
//
// pino's destination (sonic-boom) does the writing: partial writes, EAGAIN on a full pipe,
// flushing on stop. The batching happens here because sonic-boom's own (`minLength`)
// re-measures its whole pending buffer on every line, about 6% of the server's CPU under a
// load of key lookups; keeping the lines in an array and joining them once per batch costs
// next to nothing.
// How a batch is written depends on what stdout is (stdoutWriting):
//   - a file: from the event loop itself, 64 KB at a time. A file never makes its writer wait
//     for a reader, and handing each batch to a libuv worker thread cost more than writing it:
//     3.3–3.8 µs of CPU a line in 4 KB batches through the thread, 0.5 µs in 64 KB batches
//     written directly (400,000 request lines, this machine);
//   - a pipe, a socket or a terminal (journald, a container runtime, a log shipper): through a
//     worker thread, 4 KB at a time, so a slow reader never stalls the server, and a batch is
//     at most PIPE_BUF, which no other writer on the same pipe can split.
// Lines wait at most until the next `writePending` (start.ts calls it every second) or
// `flush` (on stop: every line is written; through a worker thread, also synced to disk).
// A line longer than MAX_LINE_CHARS is shortened first (boundedLine): whatever a request
// held, its log entry is never megabytes.
// A log that cannot be written (a full disk, a reader that went away) never stops the server:
// the destination keeps up to UNWRITTEN_LIMIT of lines and drops the rest, stderr says so once,
// and once writing works again the log gets a line counting what was dropped.

import { fstatSync, writeSync } from 'node:fs'
import pino from 'pino'
import { shortened } from '../errors.ts'

type Destination = ReturnType<typeof pino.destination>

/** What stdout's destination holds while it cannot write; lines beyond it are dropped (and counted). */
export const UNWRITTEN_LIMIT = 16 * 1024 * 1024

/** How lines reach stdout, as described above. */
export function stdoutWriting(): { destination: Destination; batchChars: number } {
  let toFile = false
  try {
    toFile = fstatSync(1).isFile()
  } catch {
    // stdout closed or not inspectable: write as to a pipe.
  }
  // minLength 1: sonic-boom's flush waits only for writes in flight when minLength is set.
  return toFile
    ? { destination: pino.destination({ sync: true, maxLength: UNWRITTEN_LIMIT }), batchChars: 64 * 1024 }
    : { destination: pino.destination({ sync: false, minLength: 1, maxLength: UNWRITTEN_LIMIT }), batchChars: 4096 }
}

export class LogLines {
  readonly #destination: Destination
  readonly #batchChars: number
  readonly #format: ((line: string) => string) | undefined
  #pending: string[] = []
  #size = 0
  /** Why the destination cannot write, while it cannot; and the lines it dropped meanwhile. */
  #failing: string | undefined
  #dropped = 0

  // No destination: stdout (stdoutWriting). format: rewrites each line (pretty-log.ts on a
  // terminal); none: the JSON lines as they are.
  constructor(destination?: Destination, batchChars?: number, format?: (line: string) => string) {
    const stdout = destination ? undefined : stdoutWriting()
    this.#destination = destination ?? stdout!.destination
    this.#batchChars = batchChars ?? stdout?.batchChars ?? 4096
    this.#format = format
    // Without a listener, sonic-boom's 'error' would be thrown: a full disk would end the server.
    this.#destination.on('error', (error: NodeJS.ErrnoException) => this.#cannotWrite(error))
    this.#destination.on('drop', (batch: string) => (this.#dropped += lineCount(batch)))
    this.#destination.on('write', () => this.#failing && this.#writesAgain())
    // pino flushes an asynchronous destination at exit with sonic-boom's flushSync, which
    // retries a failing write forever (ENOSPC included): a full disk kept the process from
    // ever exiting. While the log cannot be written, the exit does not try.
    const flushSync = this.#destination.flushSync.bind(this.#destination)
    this.#destination.flushSync = () => {
      if (!this.#failing) flushSync()
    }
  }

  /** pino calls this with each serialised line. */
  write(line: string): void {
    if (line.length > MAX_LINE_CHARS) line = boundedLine(line)
    if (this.#format) line = this.#format(line)
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

  /** pino's `logger.flush(cb)` lands here: everything pending is written (through a worker thread, also synced), then `done` runs. */
  flush(done?: (error?: Error) => void): void {
    this.writePending()
    this.#destination.flush(done)
  }

  #cannotWrite(error: NodeJS.ErrnoException): void {
    if (this.#failing) return
    this.#failing = error.code ?? error.message
    try {
      writeSync(2, `entityctl: the log cannot be written (${error.message}); up to ${UNWRITTEN_LIMIT / 1024 / 1024} MB of lines wait for it, later ones are dropped\n`)
    } catch {
      // stderr cannot be written either: nothing is left to tell.
    }
  }

  /** The destination writes again: the log says what it missed (after the lines it held, not inside their write). */
  #writesAgain(): void {
    const line = `${JSON.stringify({ level: 40, time: Date.now(), msg: 'the log could not be written for a while', error: this.#failing, droppedLines: this.#dropped })}\n`
    this.#failing = undefined
    this.#dropped = 0
    queueMicrotask(() => this.write(line))
  }
}

function lineCount(batch: string): number {
  let count = 0
  for (let at = batch.indexOf('\n'); at !== -1; at = batch.indexOf('\n', at + 1)) count++
  return count
}

/** Longer lines are shortened; ordinary ones (a request's line is ~200 characters) are far below. */
export const MAX_LINE_CHARS = 16 * 1024

/** What a shortened line keeps of each value: strings, arrays and objects cut with a marker. */
const KEPT = { chars: 1000, items: 20, depth: 6 } as const

/**
 * A pino line of at most MAX_LINE_CHARS: its long strings, arrays and objects shortened with a
 * marker and `"shortened": true` added; a line that is not JSON, or still too long, becomes a
 * line quoting its start.
 */
export function boundedLine(line: string): string {
  try {
    const entry = keptOf(JSON.parse(line), 0)
    const text = `${JSON.stringify({ ...(entry as object), shortened: true })}\n`
    if (text.length <= MAX_LINE_CHARS) return text
  } catch {
    // Not JSON (or not an object): quoted below.
  }
  return `${JSON.stringify({ level: 40, msg: 'log line shortened', chars: line.length, start: shortened(line, KEPT.chars) })}\n`
}

function keptOf(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return shortened(value, KEPT.chars)
  if (typeof value !== 'object' || value === null) return value
  if (depth >= KEPT.depth) return '(nested too deep)'
  if (Array.isArray(value)) {
    const kept = value.slice(0, KEPT.items).map((item) => keptOf(item, depth + 1))
    return value.length > KEPT.items ? [...kept, `(${value.length - KEPT.items} more)`] : kept
  }
  const entries = Object.entries(value)
  const kept = Object.fromEntries(entries.slice(0, KEPT.items).map(([name, item]) => [shortened(name, 100), keptOf(item, depth + 1)]))
  return entries.length > KEPT.items ? { ...kept, '(more)': entries.length - KEPT.items } : kept
}
