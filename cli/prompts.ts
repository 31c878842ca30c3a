// Questions for a person at a terminal (inquirer). Without a terminal a missing answer is
// an error that names the option to pass instead: scripts never hang on a prompt.

import { CliError } from './cli-error.ts'

export function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !process.env.CI
}

export async function confirm(message: string): Promise<boolean> {
  if (!interactive()) throw new CliError(`${message} Pass --yes to confirm without a terminal.`)
  const { default: inquirer } = await import('inquirer')
  const { ok } = await inquirer.prompt([{ type: 'confirm', name: 'ok', message, default: false }])
  return ok
}

/** Asks for a required value that was not given as an option. */
export async function ask(option: string, message: string, validate: (value: string) => true | string, secret = false): Promise<string> {
  if (!interactive()) throw new CliError(`Missing ${option}.`)
  const { default: inquirer } = await import('inquirer')
  const { value } = await inquirer.prompt([{ type: secret ? 'password' : 'input', name: 'value', message, validate, mask: '*' }])
  return value
}
