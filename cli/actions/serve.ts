import type { Command } from 'commander'
import type { Logger } from 'pino'
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
  // Everything said from here on goes through the server's log, so the log stays one kind of line.
  const { logger } = server
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, `${signal} received, shutting down`)
    server.stop().then(
      () => process.exit(0),
      (error) => exitAfterLog(logger, 1, () => logger.error({ err: error }, 'shutdown failed')),
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  guardProcess(logger)
}

/**
 * The last line of defence; errors of the database driver and of sockets are handled where
 * they arise (pool and client 'error' listeners, the request's error boundary). A promise
 * rejected with nobody waiting for it changed nothing half-way: say so and serve on. An
 * exception thrown out of a callback may have left any state half-changed: say so and exit
 * 1, for the supervisor to start a clean process (README, "Running it as a service").
 */
function guardProcess(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled rejection (serving on)')
  })
  process.on('uncaughtException', (error) => {
    exitAfterLog(logger, 1, () => logger.fatal({ err: error }, 'uncaught exception, exiting'))
  })
}

/** Logs, then exits once the line is written (the log is batched: http/log-lines.ts). */
function exitAfterLog(logger: Logger, code: number, log: () => void): void {
  log()
  logger.flush(() => process.exit(code))
  // A log that cannot be written must not keep a broken process alive.
  setTimeout(() => process.exit(code), 2000).unref()
}
