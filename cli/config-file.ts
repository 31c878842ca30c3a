// The config file a command works on: the one named by --config or $ENTITYCTL_CONFIG, else
// entityctl.json in the project folder. It must exist and be readable (a mistyped path is an
// error naming it, exit 2), except for `tenant add`, which creates it on a first run.

import { accessSync, constants, statSync } from 'node:fs'
import type { Command } from 'commander'
import { configPath } from '../server/config/load-config.ts'
import { CliError } from './cli-error.ts'

export function configFileOf(command: Command, options: { mayCreate?: boolean } = {}): string {
  const path = configPath(command.optsWithGlobals().config)
  let stat: ReturnType<typeof statSync>
  try {
    stat = statSync(path)
  } catch {
    if (options.mayCreate) return path
    throw new CliError(`Config file ${path} does not exist. Check --config / $ENTITYCTL_CONFIG, or run ./install.sh (or \`entityctl tenant add <name>\`) to create it.`, {
      code: 'ConfigError',
    })
  }
  if (!stat.isFile()) throw new CliError(`Config file ${path} is not a file.`, { code: 'ConfigError' })
  try {
    accessSync(path, constants.R_OK)
  } catch (error) {
    throw new CliError(`Config file ${path} cannot be read: ${(error as Error).message}.`, { code: 'ConfigError' })
  }
  return path
}
