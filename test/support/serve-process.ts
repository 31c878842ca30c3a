// `bin/entityctl serve` as a real process on a test server's config: started on a free
// port, ready when it logs "entityctl serving", its log lines kept for assertions.

import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const root = fileURLToPath(new URL('../..', import.meta.url))
const READY_GUARD_MS = 180_000

export interface ServeProcess {
  readonly process: ChildProcess
  readonly url: string
  readonly api: string
  readonly lines: Record<string, unknown>[]
  readonly exited: Promise<number | null>
  /** All it wrote to stderr so far (a serving process writes nothing there: its log is stdout). */
  stderr(): string
  /** The first log line, from `after` on, that `matches`: one already written or the next to come. */
  line(matches: (entry: Record<string, unknown>) => boolean, after?: number): Promise<Record<string, unknown>>
  /** SIGTERM, then wait for the exit code. */
  stop(): Promise<number | null>
}

export function serveProcess(configPath: string, env: Record<string, string> = {}, args: readonly string[] = [], readyWithinMs = READY_GUARD_MS): Promise<ServeProcess> {
  const child = spawn(join(root, 'bin/entityctl'), ['--config', configPath, 'serve', '--port', '0', ...args], {
    env: { ...process.env, Server__LogLevel: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: Record<string, unknown>[] = []
  const waiting = new Set<(entry: Record<string, unknown>) => void>()
  const firstLine = (matches: (entry: Record<string, unknown>) => boolean, after = 0) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const found = lines.slice(after).find(matches)
      if (found) return resolve(found)
      const check = (entry: Record<string, unknown>) => {
        if (!matches(entry)) return
        waiting.delete(check)
        resolve(entry)
      }
      waiting.add(check)
    })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  // A test that times out leaves its server behind unless someone stops it: the worker's exit
  // does, with SIGTERM, so that the server stops the embedded PostgreSQL it started.
  const stopOnExit = () => child.kill('SIGTERM')
  process.once('exit', stopOnExit)
  exited.then(() => process.removeListener('exit', stopOnExit))
  return new Promise((resolve, reject) => {
    let stderr = ''
    // Ready is the "entityctl serving" line, or the exit that says why not. The guard is only
    // for a server that does neither (a hang): far beyond a start on a busy machine, and it
    // stops the server as a signal does (its embedded PostgreSQL too), killing it only if that fails.
    const timer = setTimeout(() => {
      child.kill('SIGTERM')
      setTimeout(() => child.kill('SIGKILL'), 15_000).unref()
      reject(new Error(`serve did not log "entityctl serving" within ${readyWithinMs / 1000} s: ${stderr}`))
    }, readyWithinMs)
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with ${code}: ${stderr}`))
    })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line)
      lines.push(entry)
      for (const check of [...waiting]) check(entry)
      if (entry.msg !== 'entityctl serving') return
      clearTimeout(timer)
      resolve({
        process: child,
        url: entry.url,
        api: `${entry.url}/api`,
        lines,
        exited,
        stderr: () => stderr,
        line: firstLine,
        stop: async () => {
          child.kill('SIGTERM')
          return exited
        },
      })
    })
  })
}
