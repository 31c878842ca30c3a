import { Command } from 'commander'
import { startServer } from '../../server/start.ts'

export function serveCommand(): Command {
  return new Command('serve')
    .description('Start the OData server with the plugins of the plugins folder (embedded PostgreSQL unless Database:ConnectionString is set).')
    .option('-p, --port <port>', 'port to listen on (default: Server:Port, or $PORT)', parsePort)
    .option('--host <address>', 'address to listen on (default: Server:Host)')
    .action(async (options: { port?: number; host?: string }, command: Command) => {
      const server = await startServer({ configPath: command.optsWithGlobals().config, port: options.port, host: options.host })
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
    })
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

function parsePort(value: string): number {
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, not '${value}'`)
  return port
}
