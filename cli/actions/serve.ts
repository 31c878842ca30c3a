import type { Command } from 'commander'
import { loadConfig } from '../../server/config/load-config.ts'
import { startServer } from '../../server/start.ts'
import { configFileOf } from '../config-file.ts'
import { unreachable } from '../database-hint.ts'

export async function serve(options: { port?: number; host?: string }, command: Command): Promise<void> {
  const configPath = configFileOf(command)
  const server = await startServer({ configPath, port: options.port, host: options.host }).catch((error) => {
    // Any tenant's own connection string may be the one: the start migrates every tenant.
    const config = loadConfig(configPath)
    throw unreachable(error, config, config.Tenants.keys()) ?? error
  })
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    process.stderr.write(`entityctl: ${signal} received, shutting down\n`)
    server.stop().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`entityctl: shutdown failed: ${(error as Error).message}\n`)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  guardProcess()
}

/**
 * The last line of defence; errors of the database driver and of sockets are handled where
 * they arise (pool and client 'error' listeners, the request's error boundary). A promise
 * rejected with nobody waiting for it changed nothing half-way: say so and serve on. An
 * exception thrown out of a callback may have left any state half-changed: say so and exit
 * 1, for the supervisor to start a clean process (README, "Running it as a service").
 */
function guardProcess(): void {
  process.on('unhandledRejection', (reason) => {
    process.stderr.write(`entityctl: unhandled rejection (serving on): ${describe(reason)}\n`)
  })
  process.on('uncaughtException', (error) => {
    process.stderr.write(`entityctl: uncaught exception, exiting: ${describe(error)}\n`)
    process.exit(1)
  })
}

function describe(reason: unknown): string {
  return reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)
}
