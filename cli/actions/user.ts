import type { Command } from 'commander'
import { addUser, listUsers, setPassword } from '../../server/auth/user-admin.ts'
import { checkPasswordStrength } from '../../server/auth/passwords.ts'
import { grantRole as grantUserRole, revokeRole as revokeUserRole, setUserFlag } from '../../server/auth/role-admin.ts'
import { withAdminContext } from '../context.ts'
import { printResult, shownNames, table } from '../output.ts'
import { ask, askNewPassword } from '../prompts.ts'
import { usageError } from '../cli-error.ts'
import { adminCall, nonEmpty, tenantOf } from './shared.ts'
import { quotedName } from '../../server/model/control-characters.ts'

interface UserOptions {
  tenant?: string
  username?: string
  password?: string
  fullAccess?: boolean
  role?: string
  json?: boolean
}

export async function add(options: UserOptions, command: Command): Promise<void> {
  const { tenant, username } = await tenantAndUser(options)
  const password = await newPassword(options, 'Password:')
  await withAdminContext(command, async (context) => {
    const created = await adminCall(async () => addUser(await context.tenant(tenant), username, password, options.fullAccess ?? false))
    printResult(options, created, () => `User ${quotedName(created.username)} added to tenant '${tenant}'${created.hasFullAccess ? ' with full access' : ''}.`)
  })
}

export async function list(options: UserOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const users = await listUsers(await context.tenant(tenant))
    printResult(options, users, () => table(users.map((u) => ({ ...u, roles: shownNames(u.roles) })), ['username', 'hasFullAccess', 'disabled', 'roles', 'guid']))
  })
}

export async function changePassword(options: UserOptions, command: Command): Promise<void> {
  const { tenant, username } = await tenantAndUser(options)
  const password = await newPassword(options, 'New password:')
  await withAdminContext(command, async (context) => {
    await adminCall(async () => setPassword(await context.tenant(tenant), username, password))
    printResult(options, { tenant, username, passwordSet: true }, () => `Password of ${quotedName(username)} set.`)
  })
}

export async function grantRole(options: UserOptions, command: Command): Promise<void> {
  const { tenant, username } = await tenantAndUser(options)
  const role = options.role ?? (await ask('--role', 'Role:', nonEmpty))
  await withAdminContext(command, async (context) => {
    await adminCall(async () => grantUserRole(await context.tenant(tenant), username, role))
    printResult(options, { tenant, username, role, granted: true }, () => `User ${quotedName(username)} has role ${quotedName(role)}.`)
  })
}

export async function revokeRole(options: UserOptions, command: Command): Promise<void> {
  const { tenant, username } = await tenantAndUser(options)
  const role = options.role ?? (await ask('--role', 'Role:', nonEmpty))
  await withAdminContext(command, async (context) => {
    await adminCall(async () => revokeUserRole(await context.tenant(tenant), username, role))
    printResult(options, { tenant, username, role, revoked: true }, () => `User ${quotedName(username)} no longer has role ${quotedName(role)}.`)
  })
}

export async function fullAccess(state: string, options: UserOptions, command: Command): Promise<void> {
  if (state !== 'on' && state !== 'off') throw usageError(`full-access takes 'on' or 'off', not ${quotedName(state)}.`)
  const { tenant, username } = await tenantAndUser(options)
  await withAdminContext(command, async (context) => {
    await adminCall(async () => setUserFlag(await context.tenant(tenant), username, 'HasFullAccess', state === 'on'))
    printResult(options, { tenant, username, hasFullAccess: state === 'on' }, () => `Full access of ${quotedName(username)} is ${state}.`)
  })
}

export const disable = (options: UserOptions, command: Command) => setDisabled(true, options, command)
export const enable = (options: UserOptions, command: Command) => setDisabled(false, options, command)

async function setDisabled(disabled: boolean, options: UserOptions, command: Command): Promise<void> {
  const { tenant, username } = await tenantAndUser(options)
  await withAdminContext(command, async (context) => {
    await adminCall(async () => setUserFlag(await context.tenant(tenant), username, 'Disabled', disabled))
    printResult(options, { tenant, username, disabled }, () => `User ${quotedName(username)} ${disabled ? 'disabled' : 'enabled'}.`)
  })
}

/** --password, or asked for: one the password rule refuses is a value the option cannot take, a usage error (exit 2) as `--days 400` is. */
async function newPassword(options: UserOptions, prompt: string): Promise<string> {
  const password = options.password ?? (await askNewPassword('--password', prompt, checkPasswordStrength))
  const strength = checkPasswordStrength(password)
  if (strength !== true) throw usageError(`--password is refused: ${strength}.`)
  return password
}

async function tenantAndUser(options: UserOptions): Promise<{ tenant: string; username: string }> {
  const tenant = await tenantOf(options)
  const username = options.username ?? (await ask('--username', 'User name:', nonEmpty))
  return { tenant, username }
}
