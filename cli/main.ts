// entityctl: one binary, the admin CLI and the server. The command tree (cli/commands/*) is
// commander alone; each action imports its implementation when it runs (cli/lazy.ts), so
// help, usage errors and completion never load the server.

import { Command, CommanderError } from 'commander'
import { readFileSync } from 'node:fs'
import { CliError, EXIT } from './cli-error.ts'
import { printable, printError } from './output.ts'
import { serveCommand } from './commands/serve.ts'
import { tenantCommand } from './commands/tenant.ts'
import { migrateCommand } from './commands/migrate.ts'
import { userCommand } from './commands/user.ts'
import { configCommand } from './commands/config.ts'
import { roleCommand } from './commands/role.ts'
import { responsibilityCommand } from './commands/responsibility.ts'
import { patCommand } from './commands/pat.ts'
import { completionCommand } from './commands/completion.ts'
import { openapiCommand } from './commands/openapi.ts'
import { serviceCommand } from './commands/service.ts'
import { doctorCommand } from './commands/doctor.ts'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

const EXIT_CODES_HELP = `
Exit codes: 0 ok, 1 failure, 2 usage or configuration error, 130 interrupted (Ctrl-C at a prompt).
With --json, results and errors ({"error":{"code","message"}}) are JSON on stdout.`

export function buildProgram(): Command {
  const program = new Command('entityctl')
    .description('Turns entity plugins into a multi-tenant OData v4 service, and administers it.')
    .version(version)
    .option('-c, --config <path>', 'config file (default: $ENTITYCTL_CONFIG or entityctl.json in the project folder)')
    .addHelpText(
      'after',
      `\nExamples:\n  entityctl serve --port 8080\n  entityctl tenant add acme\n  entityctl user add --tenant acme --username ada --password "s3cret-pass" --full-access\n${EXIT_CODES_HELP}\n`,
    )
  for (const command of [
    serveCommand(),
    tenantCommand(),
    userCommand(),
    roleCommand(),
    responsibilityCommand(),
    patCommand(),
    migrateCommand(),
    configCommand(),
    doctorCommand(),
    openapiCommand(),
    serviceCommand(),
    completionCommand(),
  ]) {
    program.addCommand(command)
  }
  return program
}

/** Commander's settings for every command of the tree (addCommand does not pass them on). */
function configureTree(command: Command, json: boolean): void {
  command.exitOverride().showHelpAfterError(!json && '(run with --help for usage)')
  // With --json the error is printed once, as JSON, by main().
  // Otherwise commander prints it, repeating what was typed (`unknown command '…'`): printable.
  command.configureOutput({ outputError: json ? () => {} : (text, write) => write(printable(text)) })
  // A group (`entityctl tenant`) passes options on to its subcommands; given alone, it
  // prints its help and exits 2, with --json too.
  if (command.commands.length > 0 && command.parent) command.allowUnknownOption()
  for (const sub of command.commands) configureTree(sub, json)
}

/** --json anywhere before a `--`. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}

export async function main(argv: readonly string[]): Promise<number> {
  const json = wantsJson(argv)
  const program = buildProgram()
  configureTree(program, json)
  try {
    await program.parseAsync(argv, { from: 'user' })
    return EXIT.ok
  } catch (error) {
    return report(error, json)
  }
}

/** Prints the error (one line, or JSON) and gives the exit code. */
function report(error: unknown, json: boolean): number {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) return EXIT.ok // --help, --version
    // A command given without its subcommand prints its help (to stderr) and lands here.
    if (json) printError(true, 'UsageError', error.code === 'commander.help' ? 'a subcommand is required; see --help' : error.message.replace(/^error: /, ''))
    return EXIT.usage
  }
  if (error instanceof CliError) {
    if (!error.silent) printError(json, error.code, error.message, error.extra)
    return error.exitCode
  }
  // By name: importing the server's error classes here would load them for --help too.
  const name = (error as Error)?.name
  if (name === 'PluginError') {
    // Plugin errors (server/model/plugin-error.ts) may say where: file, line, column, code.
    const { summary, position, frame, message } = error as Error & { summary?: string; position?: object; frame?: string }
    printError(json, name, json ? (summary ?? message) : message, position ? { location: position, frame } : {})
    return EXIT.usage
  }
  if (name === 'ConfigError') {
    printError(json, name, (error as Error).message)
    return EXIT.usage
  }
  printError(json, 'Failed', (error as Error)?.message || String(error))
  if (process.env.ENTITYCTL_DEBUG) process.stderr.write(`${(error as Error)?.stack}\n`)
  return EXIT.failure
}

if (import.meta.main) {
  const argv = process.argv.slice(2)
  const code = await main(argv)
  // serve keeps running; everything else ends here.
  if (code !== 0 || !argv.includes('serve')) process.exit(code)
}
