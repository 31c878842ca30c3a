// entityctl: one binary, the admin CLI and the server. Each noun is its own command module.

import { Command, CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { CliError } from './cli-error.ts'
import { serveCommand } from './commands/serve.ts'
import { tenantCommand } from './commands/tenant.ts'
import { migrateCommand } from './commands/migrate.ts'
import { userCommand } from './commands/user.ts'
import { configCommand } from './commands/config.ts'
import { roleCommand } from './commands/role.ts'
import { responsibilityCommand } from './commands/responsibility.ts'
import { patCommand } from './commands/pat.ts'
import { ConfigError } from '../server/config/load-config.ts'
import { PluginError } from '../server/model/plugin-error.ts'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

export function buildProgram(): Command {
  const program = new Command('entityctl')
    .description('Turns entity plugins into a multi-tenant OData v4 service, and administers it.')
    .version(version)
    .option('-c, --config <path>', 'config file (default: $ENTITYCTL_CONFIG or entityctl.json in the project folder)')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', '\nExamples:\n  entityctl serve --port 8080\n  entityctl tenant add acme\n  entityctl user add --tenant acme --username ada --password "s3cret-pass" --full-access\n')
  program.addCommand(serveCommand())
  program.addCommand(tenantCommand())
  program.addCommand(userCommand())
  program.addCommand(roleCommand())
  program.addCommand(responsibilityCommand())
  program.addCommand(patCommand())
  program.addCommand(migrateCommand())
  program.addCommand(configCommand())
  return program
}

export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram().exitOverride()
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode
    if (error instanceof CliError || error instanceof ConfigError || error instanceof PluginError) {
      process.stderr.write(`entityctl: ${error.message}\n`)
      return error instanceof CliError ? error.exitCode : 2
    }
    const message = (error as Error)?.message ?? String(error)
    process.stderr.write(`entityctl: ${message}\n`)
    if (process.env.ENTITYCTL_DEBUG) process.stderr.write(`${(error as Error)?.stack}\n`)
    return 1
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2))
  // serve keeps running; everything else ends here.
  if (code !== 0 || !process.argv.slice(2).includes('serve')) process.exit(code)
}
