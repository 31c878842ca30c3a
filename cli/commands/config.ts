import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

const actions = () => import('../actions/config.ts')

export function configCommand(): Command {
  const config = new Command('config').description('Inspect the configuration.')
  withJson(config.command('check').description('Validate the config file and environment overrides; print the file used.')).action(lazy(actions, 'check'))
  withJson(config.command('keys').description('List every key with its type, default and meaning (Markdown; --json: one object per key).')).action(
    lazy(actions, 'keys'),
  )
  return config
}
