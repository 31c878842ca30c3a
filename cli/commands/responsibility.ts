import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

const actions = () => import('../actions/responsibility.ts')

export function responsibilityCommand(): Command {
  const responsibility = new Command('responsibility').description('Responsibilities: declared by plugins, recorded per tenant, granted to roles.')
  withJson(
    responsibility
      .command('list')
      .description("List a tenant's responsibilities with their permissions and the roles that have them.")
      .option('-t, --tenant <name>', 'tenant'),
  ).action(lazy(actions, 'list'))
  withJson(
    responsibility
      .command('sync')
      .description("Record the plugins' responsibilities in the tenant (every tenant by default); the server also does it at start.")
      .option('-t, --tenant <name>', 'only this tenant'),
  ).action(lazy(actions, 'sync'))
  return responsibility
}
