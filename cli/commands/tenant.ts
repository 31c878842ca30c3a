import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

const actions = () => import('../actions/tenant.ts')

export function tenantCommand(): Command {
  const tenant = new Command('tenant').description(
    'Manage tenants: each has its own database. Running servers follow the config file: a change reaches them within a second or two, without a restart.',
  )
  withJson(tenant.command('add [name]').description('Create a tenant: its database, its schema, and its entry in the config file (created if missing).')).action(
    lazy(actions, 'add'),
  )
  withJson(tenant.command('list').description('List the tenants of the config file.')).action(lazy(actions, 'list'))
  withJson(
    tenant
      .command('remove [name]')
      .description('Remove a tenant and drop its database (asks first).')
      .option('-y, --yes', 'do not ask for confirmation')
      .option('--keep-database', 'remove the tenant from the config but keep its database'),
  ).action(lazy(actions, 'remove'))
  withJson(
    tenant
      .command('disable <name>')
      .description('Refuse the tenant\'s requests (401) and close its connections on every running server, keeping its data.'),
  ).action(lazy(actions, 'disable'))
  withJson(tenant.command('enable <name>').description('Serve a disabled tenant again.')).action(lazy(actions, 'enable'))
  return tenant
}
