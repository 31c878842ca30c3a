import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

export function migrateCommand(): Command {
  return withJson(
    new Command('migrate')
      .description('Bring tenant schemas up to date with the plugins. Changes that lose data are refused unless --allow-data-loss.')
      .option('-t, --tenant <name>', 'only this tenant (default: all)')
      .option('--allow-data-loss', 'apply changes that drop tables or columns holding data'),
  ).action(lazy(() => import('../actions/migrate.ts'), 'migrate'))
}
