import { Command } from 'commander'
import { addUser, listUsers, setPassword, UserAdminError } from '../../server/auth/user-admin.ts'
import { checkPasswordStrength } from '../../server/auth/passwords.ts'
import { withAdminContext } from '../context.ts'
import { printResult, table } from '../output.ts'
import { ask } from '../prompts.ts'
import { CliError } from '../cli-error.ts'
import { ServiceError } from '../../server/errors.ts'
import { grantRole, revokeRole, setUserFlag } from '../../server/auth/role-admin.ts'

interface UserOptions {
  tenant?: string
  username?: string
  password?: string
  fullAccess?: boolean
  json?: boolean
}

export function userCommand(): Command {
  const user = new Command('user').description("Manage a tenant's users.")

  user
    .command('add')
    .description('Create a user who can sign in.')
    .option('-t, --tenant <name>', 'tenant')
    .option('-u, --username <name>', 'user name')
    .option('-p, --password <password>', 'password (at least 8 characters; asked for on a terminal when omitted)')
    .option('--full-access', 'the user passes every permission check')
    .option('--json', 'print the result as JSON')
    .action(async (options: UserOptions, command: Command) => {
      const { tenant, username } = await tenantAndUser(options)
      const password = options.password ?? (await ask('--password', 'Password:', checkPasswordStrength, true))
      await withAdminContext(command, async (context) => {
        const created = await adminCall(() => context.tenant(tenant).then((db) => addUser(db, username, password, options.fullAccess ?? false)))
        printResult(options, created, () => `User '${created.username}' added to tenant '${tenant}'${created.hasFullAccess ? ' with full access' : ''}.`)
      })
    })

  user
    .command('list')
    .description("List a tenant's users with their roles.")
    .option('-t, --tenant <name>', 'tenant')
    .option('--json', 'print the result as JSON')
    .action(async (options: UserOptions, command: Command) => {
      const tenant = options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
      await withAdminContext(command, async (context) => {
        const users = await listUsers(await context.tenant(tenant))
        printResult(options, users, () => table(users.map((u) => ({ ...u, roles: u.roles.join(', ') })), ['username', 'hasFullAccess', 'disabled', 'roles', 'guid']))
      })
    })

  user
    .command('set-password')
    .description("Set a user's password; their open sessions (refresh tokens) end.")
    .option('-t, --tenant <name>', 'tenant')
    .option('-u, --username <name>', 'user name')
    .option('-p, --password <password>', 'new password (asked for on a terminal when omitted)')
    .option('--json', 'print the result as JSON')
    .action(async (options: UserOptions, command: Command) => {
      const { tenant, username } = await tenantAndUser(options)
      const password = options.password ?? (await ask('--password', 'New password:', checkPasswordStrength, true))
      await withAdminContext(command, async (context) => {
        await adminCall(async () => setPassword(await context.tenant(tenant), username, password))
        printResult(options, { tenant, username, passwordSet: true }, () => `Password of '${username}' set.`)
      })
    })
  user
    .command('grant-role')
    .description('Give a user a role (and so its responsibilities, and those of the roles under it).')
    .option('-t, --tenant <name>', 'tenant')
    .option('-u, --username <name>', 'user name')
    .option('-r, --role <name>', 'role')
    .option('--json', 'print the result as JSON')
    .action(async (options: UserOptions & { role?: string }, command: Command) => {
      const { tenant, username } = await tenantAndUser(options)
      const role = options.role ?? (await ask('--role', 'Role:', nonEmpty))
      await withAdminContext(command, async (context) => {
        await adminCall(async () => grantRole(await context.tenant(tenant), username, role))
        printResult(options, { tenant, username, role, granted: true }, () => `User '${username}' has role '${role}'.`)
      })
    })

  user
    .command('revoke-role')
    .description('Take a role from a user.')
    .option('-t, --tenant <name>', 'tenant')
    .option('-u, --username <name>', 'user name')
    .option('-r, --role <name>', 'role')
    .option('--json', 'print the result as JSON')
    .action(async (options: UserOptions & { role?: string }, command: Command) => {
      const { tenant, username } = await tenantAndUser(options)
      const role = options.role ?? (await ask('--role', 'Role:', nonEmpty))
      await withAdminContext(command, async (context) => {
        await adminCall(async () => revokeRole(await context.tenant(tenant), username, role))
        printResult(options, { tenant, username, role, revoked: true }, () => `User '${username}' no longer has role '${role}'.`)
      })
    })

  user
    .command('full-access <state>')
    .description('Turn full access (every permission check passes) on or off. Turning it off disables a fallback PAT for good.')
    .option('-t, --tenant <name>', 'tenant')
    .option('-u, --username <name>', 'user name')
    .option('--json', 'print the result as JSON')
    .action(async (state: string, options: UserOptions, command: Command) => {
      if (state !== 'on' && state !== 'off') throw new CliError(`full-access takes 'on' or 'off', not '${state}'.`)
      const { tenant, username } = await tenantAndUser(options)
      await withAdminContext(command, async (context) => {
        await adminCall(async () => setUserFlag(await context.tenant(tenant), username, 'HasFullAccess', state === 'on'))
        printResult(options, { tenant, username, hasFullAccess: state === 'on' }, () => `Full access of '${username}' is ${state}.`)
      })
    })

  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    user
      .command(name)
      .description(disabled ? 'Disable a user: refused at once, whatever tokens they hold.' : 'Enable a disabled user again.')
      .option('-t, --tenant <name>', 'tenant')
      .option('-u, --username <name>', 'user name')
      .option('--json', 'print the result as JSON')
      .action(async (options: UserOptions, command: Command) => {
        const { tenant, username } = await tenantAndUser(options)
        await withAdminContext(command, async (context) => {
          await adminCall(async () => setUserFlag(await context.tenant(tenant), username, 'Disabled', disabled))
          printResult(options, { tenant, username, disabled }, () => `User '${username}' ${disabled ? 'disabled' : 'enabled'}.`)
        })
      })
  }
  return user
}

async function tenantAndUser(options: UserOptions): Promise<{ tenant: string; username: string }> {
  const tenant = options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
  const username = options.username ?? (await ask('--username', 'User name:', nonEmpty))
  return { tenant, username }
}

export function nonEmpty(value: string): true | string {
  return value.trim().length > 0 || 'a value is required'
}

export async function adminCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof UserAdminError) throw new CliError(error.message)
    if (error instanceof ServiceError) {
      const details = error.details.map((d) => d.message).filter((m) => !error.message.includes(m))
      throw new CliError([error.message, ...details].join('; '))
    }
    throw error
  }
}
