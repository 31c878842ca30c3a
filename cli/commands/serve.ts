import { Command, InvalidArgumentError } from 'commander'
import { lazy, withJson } from '../lazy.ts'

export function serveCommand(): Command {
  return withJson(
    new Command('serve')
      .description('Start the OData server with the plugins of the plugins folder (embedded PostgreSQL unless Database:ConnectionString is set). The log is JSON lines; --json makes a failed start JSON too.')
      .option('-p, --port <port>', 'port to listen on (default: $PORT, else Server:Port)', parsePort)
      .option('--host <address>', 'address to listen on (default: Server:Host)')
      .option('--no-migrate', 'do not migrate tenant schemas at start (overrides Server:MigrateOnStart): a tenant whose schema is behind the plugins answers 503 and is listed by /readyz until `entityctl migrate` has run')
      .option('--watch', 'reload the plugins when a file of the plugins folder changes (for plugin authors): a plugin that does not load is logged with its position, and the plugins loaded before keep serving'),
  ).action(lazy(() => import('../actions/serve.ts'), 'serve'))
}

function parsePort(value: string): number {
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError(`--port must be 0..65535, not '${value}'.`)
  return port
}
