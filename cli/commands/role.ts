import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

const actions = () => import('../actions/role.ts')

export function roleCommand(): Command {
  const role = new Command('role').description("Manage a tenant's roles: their hierarchy and responsibilities.")
  const inTenant = (command: Command) => withJson(command.option('-t, --tenant <name>', 'tenant'))

  inTenant(
    role
      .command('add <name>')
      .description('Create a role, optionally under a supervisor (parent) role.')
      .option('--parent <role>', 'supervisor role: it gets the access of this one')
      .option('--description <text>', 'what the role is for'),
  ).action(lazy(actions, 'add'))
  inTenant(
    role
      .command('set-parent <role> [parent]')
      .description('Put a role under another (its supervisor), or make it a root with --none.')
      .option('--none', 'no parent: the role becomes a root'),
  ).action(lazy(actions, 'setParent'))
  inTenant(role.command('grant <role> <responsibility>').description('Give a role a responsibility (declared by a plugin; see `responsibility list`).')).action(
    lazy(actions, 'grant'),
  )
  inTenant(role.command('revoke <role> <responsibility>').description('Take a responsibility from a role.')).action(lazy(actions, 'revoke'))
  inTenant(role.command('remove <role>').description('Delete a role (refused while it has child roles); its users lose it.')).action(lazy(actions, 'remove'))
  inTenant(role.command('list').description('List the roles with their parent, responsibilities and number of users.')).action(lazy(actions, 'list'))
  inTenant(
    role.command('tree').description('Show the role hierarchy, supervisors above the roles they oversee (--json: Guid, Name, Children, as the API).'),
  ).action(lazy(actions, 'tree'))
  return role
}
