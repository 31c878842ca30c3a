import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

export function migrateCommand(): Command {
  return withJson(
    new Command('migrate')
      .description(
        'Bring tenant schemas up to date with the plugins, one migration job at a time across instances. A change that loses data is refused for its tenant unless --allow-data-loss; each applied migration is recorded in the tenant database (_Migration).',
      )
      .option('-t, --tenant <name>', 'only this tenant (default: all)')
      .option('--plan', 'change nothing: print, per tenant, the SQL a start would apply, the renames, what it would lose and the objects entityctl leaves alone')
      .option('--allow-data-loss', 'apply changes that drop tables or columns holding data (best with --tenant)'),
  ).action(lazy(() => import('../actions/migrate.ts'), 'migrate'))
}
