import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

const actions = () => import('../actions/user.ts')

export function userCommand(): Command {
  const user = new Command('user').description("Manage a tenant's users.")
  const who = (command: Command) => command.option('-t, --tenant <name>', 'tenant').option('-u, --username <name>', 'user name')

  withJson(
    who(user.command('add').description('Create a user who can sign in.'))
      .option('-p, --password <password>', 'password (at least 8 characters; asked for twice on a terminal when omitted)')
      .option('--full-access', 'the user passes every permission check'),
  ).action(lazy(actions, 'add'))
  withJson(user.command('list').description("List a tenant's users with their roles.").option('-t, --tenant <name>', 'tenant')).action(lazy(actions, 'list'))
  withJson(
    who(user.command('set-password').description("Set a user's password; their open sessions (refresh tokens) end.")).option(
      '-p, --password <password>',
      'new password (asked for twice on a terminal when omitted)',
    ),
  ).action(lazy(actions, 'changePassword'))
  withJson(
    who(user.command('grant-role').description('Give a user a role (and so its responsibilities, and those of the roles under it).')).option('-r, --role <name>', 'role'),
  ).action(lazy(actions, 'grantRole'))
  withJson(who(user.command('revoke-role').description('Take a role from a user.')).option('-r, --role <name>', 'role')).action(lazy(actions, 'revokeRole'))
  withJson(
    who(
      user
        .command('full-access <state>')
        .description('Turn full access (every permission check passes) on or off. Turning it off disables a fallback PAT for good.'),
    ),
  ).action(lazy(actions, 'fullAccess'))
  withJson(who(user.command('disable').description('Disable a user: refused at once, whatever tokens they hold.'))).action(lazy(actions, 'disable'))
  withJson(who(user.command('enable').description('Enable a disabled user again.'))).action(lazy(actions, 'enable'))
  return user
}
