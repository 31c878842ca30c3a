import { Command } from 'commander'
import { addTenant, removeTenant } from '../../server/tenancy/tenant-admin.ts'
import { withAdminContext } from '../context.ts'
import { printResult, table } from '../output.ts'
import { ask, confirm } from '../prompts.ts'
import { TENANT_NAME } from '../../server/config/load-config.ts'
import { CliError } from '../cli-error.ts'

export function tenantCommand(): Command {
  const tenant = new Command('tenant').description('Manage tenants: each has its own database.')

  tenant
    .command('add [name]')
    .description('Create a tenant: its database, its schema, and its entry in the config file.')
    .option('--json', 'print the result as JSON')
    .action(async (given: string | undefined, options: { json?: boolean }, command: Command) => {
      const name = given ?? (await ask('<name>', 'Tenant name:', validTenantName))
      await withAdminContext(command, async ({ config, model, server }) => {
        const result = await addTenant(config, model, server.url, name)
        printResult(options, { tenant: name, ...result }, () =>
          `Tenant '${name}' added (database ${result.database}${result.created ? '' : ', existing database reused'}).`)
      })
    })

  tenant
    .command('list')
    .description('List the tenants of the config file.')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      await withAdminContext(command, async ({ config }) => {
        const rows = [...config.Tenants.values()].map((t) => ({ name: t.name, database: t.ConnectionString ? '(own connection string)' : t.Database }))
        printResult(options, rows, () => table(rows, ['name', 'database']))
      })
    })

  tenant
    .command('remove [name]')
    .description('Remove a tenant and drop its database (asks first).')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--keep-database', 'remove the tenant from the config but keep its database')
    .option('--json', 'print the result as JSON')
    .action(async (given: string | undefined, options: { yes?: boolean; keepDatabase?: boolean; json?: boolean }, command: Command) => {
      const name = given ?? (await ask('<name>', 'Tenant to remove:', validTenantName))
      await withAdminContext(command, async ({ config, server }) => {
        if (!config.Tenants.has(name)) throw new CliError(`No tenant '${name}'.`)
        const what = options.keepDatabase ? `tenant '${name}' (its database is kept)` : `tenant '${name}' and ALL its data`
        if (!options.yes && !(await confirm(`Remove ${what}?`))) throw new CliError('Cancelled; nothing was removed.', 1)
        await removeTenant(config, server.url, name, options.keepDatabase ?? false)
        printResult(options, { tenant: name, removed: true }, () => `Tenant '${name}' removed.`)
      })
    })
  return tenant
}

function validTenantName(value: string): true | string {
  return TENANT_NAME.test(value) || 'lower-case letters, digits, - and _, starting with a letter (at most 40)'
}
