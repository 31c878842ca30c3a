// Questions for a person at a terminal (inquirer). Without a terminal a missing answer is
// an error that names the option to pass instead: scripts never hang on a prompt. Ctrl-C
// at a prompt ends the command with exit code 130.

import { CliError, EXIT, usageError } from './cli-error.ts'

export function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !process.env.CI
}

async function prompt<T>(question: Record<string, unknown>): Promise<T> {
  const { default: inquirer } = await import('inquirer')
  try {
    const answers = await inquirer.prompt([{ name: 'value', ...question } as never])
    return (answers as { value: T }).value
  } catch (error) {
    if ((error as Error)?.name === 'ExitPromptError') throw new CliError('Interrupted; nothing was changed.', { code: 'Interrupted', exitCode: EXIT.interrupted })
    throw error
  }
}

export async function confirm(message: string): Promise<boolean> {
  if (!interactive()) throw usageError(`${message} Pass --yes to confirm without a terminal.`)
  return prompt<boolean>({ type: 'confirm', message, default: false })
}

/** Asks for a required value that was not given as an option. */
export async function ask(option: string, message: string, validate: (value: string) => true | string, secret = false): Promise<string> {
  if (!interactive()) throw usageError(`Missing ${option}.`)
  return prompt<string>({ type: secret ? 'password' : 'input', message, validate, mask: '*' })
}

/** A new password: asked twice, and asked again until both match. */
export async function askNewPassword(option: string, message: string, validate: (value: string) => true | string): Promise<string> {
  for (;;) {
    const first = await ask(option, message, validate, true)
    const second = await ask(option, 'The same password again:', (value) => value.length > 0 || 'type it again', true)
    if (first === second) return first
    process.stderr.write('The two passwords differ; again.\n')
  }
}
