import { Command } from 'commander'
import { migrateDatabase, type MigrationReport } from '../../server/tenancy/tenant-admin.ts'
import { withAdminContext } from '../context.ts'
import { printResult, table } from '../output.ts'
import { CliError } from '../cli-error.ts'

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('Bring tenant schemas up to date with the plugins. Changes that lose data are refused unless --allow-data-loss.')
    .option('-t, --tenant <name>', 'only this tenant (default: all)')
    .option('--allow-data-loss', 'apply changes that drop tables or columns holding data')
    .option('--json', 'print the result as JSON')
    .action(async (options: { tenant?: string; allowDataLoss?: boolean; json?: boolean }, command: Command) => {
      await withAdminContext(command, async ({ config, model, tenants }) => {
        const names = options.tenant ? [options.tenant] : [...config.Tenants.keys()]
        const reports: MigrationReport[] = []
        for (const name of names) {
          const tenant = config.Tenants.get(name)
          if (!tenant) throw new CliError(`No tenant '${name}'.`)
          reports.push(await migrateDatabase(name, tenants.urlOf(tenant), model, options.allowDataLoss ?? false))
        }
        printResult(options, reports, () => table(reports.map((r) => ({ tenant: r.tenant, changes: r.statements })), ['tenant', 'changes']))
      })
    })
}
