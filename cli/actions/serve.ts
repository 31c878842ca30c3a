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
}
