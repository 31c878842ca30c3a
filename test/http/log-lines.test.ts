// The log's batching: lines wait in memory until a batch is full or a flush comes, and reach
// the file whole and in order.

import { spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { LogLines, MAX_LINE_CHARS } from '../../server/http/log-lines.ts'

/** The folders this file's tests made, removed once they are done. */
const folders: string[] = []
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

function logFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'entityctl-log-'))
  folders.push(folder)
  return folder
}

function logFile() {
  const path = join(logFolder(), 'server.log')
  const destination = pino.destination({ dest: path, sync: false, minLength: 1 })
  return { path, destination, read: () => readFileSync(path, 'utf8') }
}

const flushed = (target: { flush(done: () => void): void }) => new Promise<void>((resolve) => target.flush(() => resolve()))

describe('LogLines', () => {
  it('holds lines until the batch is full, then writes them in one piece, in order', () => {
    // LogLines hands a batch to its destination synchronously, so a destination that records
    // its writes shows exactly when a batch leaves: not for two short lines, once for the third.
    const writes: string[] = []
    const destination = Object.assign(new EventEmitter(), { write: (chunk: string) => writes.push(chunk) > 0, flush: (done?: () => void) => done?.(), flushSync: () => {} })
    const lines = new LogLines(destination as unknown as ConstructorParameters<typeof LogLines>[0], 100)
    lines.write('one\n')
    lines.write('two\n')
    expect(writes).toEqual([])
    lines.write(`${'x'.repeat(100)}\n`)
    expect(writes).toEqual([`one\ntwo\n${'x'.repeat(100)}\n`])
  })

  it('writes whatever is pending on flush, and calls back when it is on disk', async () => {
    const file = logFile()
    const logger = pino({ base: undefined, timestamp: false }, new LogLines(file.destination))
    for (let i = 0; i < 3; i++) logger.info({ i }, 'request')
    await flushed(logger)
    expect(file.read().trim().split('\n').map((line) => JSON.parse(line))).toEqual([0, 1, 2].map((i) => ({ level: 30, i, msg: 'request' })))
    const again = new LogLines(file.destination)
    await flushed(again)
    expect(file.read().trim().split('\n')).toHaveLength(3)
  })

  it('writePending (start.ts, every second) writes without syncing the file; only flush syncs', async () => {
    const file = logFile()
    await new Promise((resolve) => file.destination.once('ready', resolve))
    let syncs = 0
    const flush = file.destination.flush.bind(file.destination)
    file.destination.flush = (done?: (error?: Error) => void) => {
      syncs++
      flush(done)
    }
    const lines = new LogLines(file.destination)
    const written = new Promise<void>((resolve) => file.destination.once('write', () => resolve()))
    lines.write('one\n')
    lines.writePending()
    lines.writePending() // nothing pending: nothing written
    await written
    expect(file.read()).toBe('one\n')
    expect(syncs).toBe(0)
    lines.write('two\n')
    await flushed(lines)
    expect(file.read()).toBe('one\ntwo\n')
    expect(syncs).toBe(1)
  })

  it('shortens a line of megabytes to at most MAX_LINE_CHARS, still JSON, with its level and message', async () => {
    const file = logFile()
    const logger = pino({ base: undefined, timestamp: false }, new LogLines(file.destination))
    const details = Array.from({ length: 100_000 }, (_, i) => ({ target: `Lines/${i}`, message: 'Quantity must be at most 10.' }))
    logger.info({ status: 400, message: 'x'.repeat(3_000_000), details }, 'request refused')
    logger.info({ status: 200 }, 'request')
    await flushed(logger)
    const [refused, next] = file.read().trim().split('\n')
    expect(refused.length).toBeLessThanOrEqual(MAX_LINE_CHARS)
    expect(JSON.parse(refused)).toMatchObject({ level: 30, status: 400, msg: 'request refused', shortened: true, message: expect.stringMatching(/more characters\)$/) })
    expect(JSON.parse(next)).toEqual({ level: 30, status: 200, msg: 'request' })
  })

  it('writes to a file from the event loop in 64 KB batches, to a pipe through a worker thread in 4 KB ones', async () => {
    // A process of its own, whose stdout is the file or the pipe: what stdoutWriting sees.
    const script = `import { stdoutWriting } from ${JSON.stringify(new URL('../../server/http/log-lines.ts', import.meta.url).href)}
      const { destination, batchChars } = stdoutWriting()
      process.stderr.write(JSON.stringify({ sync: destination.sync, batchChars }))`
    const writing = (stdout: number | 'pipe') =>
      new Promise<unknown>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', stdout, 'pipe'] })
        let said = ''
        child.stderr!.on('data', (chunk: Buffer) => (said += chunk))
        child.on('error', reject)
        child.on('close', (status) => (status === 0 ? resolve(JSON.parse(said)) : reject(new Error(`exit ${status}: ${said}`))))
      })
    const file = openSync(join(logFolder(), 'server.log'), 'a')
    try {
      expect(await writing(file)).toEqual({ sync: true, batchChars: 65536 })
    } finally {
      closeSync(file)
    }
    expect(await writing('pipe')).toEqual({ sync: false, batchChars: 4096 })
  })

  it('lives through a destination that cannot write, and tells the log what it dropped once it can', async () => {
    // sonic-boom's contract: a failed write emits 'error' and keeps the batch, a batch past
    // maxLength is dropped with 'drop', a successful write emits 'write'.
    const written: string[] = []
    class FillingDestination extends EventEmitter {
      full = true
      readonly held: string[] = []
      write(batch: string): boolean {
        if (this.full) {
          if (this.held.length >= 2) this.emit('drop', batch)
          else this.held.push(batch)
          this.emit('error', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))
          return true
        }
        written.push(...this.held.splice(0), batch)
        this.emit('write', batch.length)
        return true
      }
      flush(done?: () => void): void {
        done?.()
      }
      flushSync(): void {}
    }
    const destination = new FillingDestination()
    const lines = new LogLines(destination as unknown as ConstructorParameters<typeof LogLines>[0], 10)
    for (let i = 0; i < 5; i++) lines.write(`line ${i} of five\n`) // a batch each: 2 held, 3 dropped
    expect(written).toEqual([])
    destination.full = false
    lines.write('line 5 of six\n')
    expect(written).toEqual(['line 0 of five\n', 'line 1 of five\n', 'line 5 of six\n'])
    await Promise.resolve() // the report is queued after the write that succeeded
    lines.writePending()
    expect(JSON.parse(written[3])).toMatchObject({ level: 40, msg: 'the log could not be written for a while', error: 'ENOSPC', droppedLines: 3 })
  })
})
