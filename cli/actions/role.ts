import type { Command } from 'commander'
import { addRole, grantResponsibility, listRoles, removeRole, revokeResponsibility, setRoleParent, type RoleSummary } from '../../server/auth/role-admin.ts'
import { loadRoleTree, publicRoleTree, type RoleNode } from '../../server/auth/role-tree.ts'
import { namingPolicy } from '../../server/model/naming.ts'
import { withAdminContext } from '../context.ts'
import { printResult, shownName, shownNames, table } from '../output.ts'
import { usageError } from '../cli-error.ts'
import { adminCall, tenantOf } from './shared.ts'
import { quotedName } from '../../server/model/control-characters.ts'

interface RoleOptions {
  tenant?: string
  json?: boolean
}

export async function add(name: string, options: RoleOptions & { parent?: string; description?: string }, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const created = await adminCall(async () => addRole(await context.tenant(tenant), name, options))
    printResult(options, created, () => `Role ${quotedName(created.name)} added${created.parent ? ` under ${quotedName(created.parent)}` : ''}.`)
  })
}

export async function setParent(name: string, parent: string | undefined, options: RoleOptions & { none?: boolean }, command: Command): Promise<void> {
  if (!parent && !options.none) throw usageError('Name the parent role, or pass --none to make the role a root.')
  if (parent && options.none) throw usageError('Give either a parent role or --none, not both.')
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const changed = await adminCall(async () => setRoleParent(await context.tenant(tenant), name, parent ?? null))
    printResult(options, changed, () => (changed.parent ? `Role ${quotedName(changed.name)} is now under ${quotedName(changed.parent)}.` : `Role ${quotedName(changed.name)} is now a root.`))
  })
}

export async function grant(name: string, responsibility: string, options: RoleOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const changed = await adminCall(async () => grantResponsibility(await context.tenant(tenant), name, responsibility))
    printResult(options, changed, () => `Role ${quotedName(changed.name)} has responsibility ${quotedName(responsibility.trim())}.`)
  })
}

export async function revoke(name: string, responsibility: string, options: RoleOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const changed = await adminCall(async () => revokeResponsibility(await context.tenant(tenant), name, responsibility))
    printResult(options, changed, () => `Role ${quotedName(changed.name)} no longer has responsibility ${quotedName(responsibility.trim())}.`)
  })
}

export async function remove(name: string, options: RoleOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    await adminCall(async () => removeRole(await context.tenant(tenant), name))
    printResult(options, { tenant, role: name, removed: true }, () => `Role ${quotedName(name)} removed.`)
  })
}

export async function list(options: RoleOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const roles = await listRoles(await context.tenant(tenant))
    printResult(options, roles, () =>
      table(roles.map((r: RoleSummary) => ({ ...r, responsibilities: shownNames(r.responsibilities) })), ['name', 'parent', 'responsibilities', 'users']),
    )
  })
}

export async function tree(options: RoleOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const roots = await loadRoleTree((await context.tenant(tenant)).pool)
    // The shape of GET /api/roles/tree: Guid, Name, Children (lower camel case when the API is).
    const json = publicRoleTree(roots, namingPolicy(context.config.ApiOptions.EnableLowerCamelCase))
    printResult(options, json, () => (roots.length === 0 ? '(no roles)' : drawTree(roots)))
  })
}

/**
 * Sales
 * ├─ Clerks
 * └─ Managers
 */
function drawTree(roots: readonly RoleNode[]): string {
  return roots.map((root) => [shownName(root.name), ...(root.children.length ? [drawChildren(root.children, '')] : [])].join('\n')).join('\n')
}

function drawChildren(nodes: readonly RoleNode[], prefix: string): string {
  return nodes
    .map((node, i) => {
      const last = i === nodes.length - 1
      const below = node.children.length > 0 ? `\n${drawChildren(node.children, prefix + (last ? '   ' : '│  '))}` : ''
      return `${prefix}${last ? '└─ ' : '├─ '}${shownName(node.name)}${below}`
    })
    .join('\n')
}
