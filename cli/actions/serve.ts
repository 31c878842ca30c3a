import type { Command } from 'commander'
import { startServer } from '../../server/start.ts'
import { configFileOf } from '../config-file.ts'

export async function serve(options: { port?: number; host?: string }, command: Command): Promise<void> {
  const server = await startServer({ configPath: configFileOf(command), port: options.port, host: options.host })
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
}
