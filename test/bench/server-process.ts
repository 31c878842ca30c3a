// A server under test as a child process: each system runs as one Node.js process of its own
// (WORKLOAD.md §5), apart from the runner whose event loop drives autocannon. Output goes to a
// log file, so the runner never spends time relaying it.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { createServer } from 'node:net'
import { httpRequest } from './http-request.ts'

export type ServerProcess = { origin: string; pid: number; logFile: string; stop(): Promise<void> }

const running = new Set<ChildProcess>()

// A runner that dies must not leave servers holding ports and connections.
process.on('exit', () => {
  for (const child of running) if (child.pid) process.kill(child.pid, 'SIGKILL')
})

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  return typeof address === 'object' && address ? address.port : 0
}

export async function startServer(options: {
  command: string
  args: string[]
  env?: Record<string, string>
  cwd: string
  port: number
  logFile: string
  /** A path that answers (any status) once the server accepts requests. */
  readyPath: string
  timeoutMs?: number
}): Promise<ServerProcess> {
  const log = openSync(options.logFile, 'a')
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', log, log],
  })
  closeSync(log)
  running.add(child)
  let exited: string | undefined
  child.on('exit', (code, signal) => {
    running.delete(child)
    exited = `exited with ${signal ?? code}`
  })
  const origin = `http://127.0.0.1:${options.port}`
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  for (;;) {
    if (exited) throw new Error(`${options.command} ${options.args.join(' ')} ${exited}; see ${options.logFile}`)
    try {
      await httpRequest(origin, 'GET', options.readyPath, {})
      break
    } catch {
      if (Date.now() > deadline) {
        await stopChild(child)
        throw new Error(`${options.command} did not answer on ${origin} in time; see ${options.logFile}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return { origin, pid: child.pid ?? 0, logFile: options.logFile, stop: () => stopChild(child) }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
  await exited
  clearTimeout(timer)
}
