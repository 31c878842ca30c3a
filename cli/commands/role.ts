import { Command } from 'commander'
import {
  addRole,
  grantResponsibility,
  listRoles,
  removeRole,
  revokeResponsibility,
  setRoleParent,
  type RoleSummary,
} from '../../server/auth/role-admin.ts'
import { loadRoleTree, type RoleNode } from '../../server/auth/role-tree.ts'
import { withAdminContext } from '../context.ts'
import { printResult, table } from '../output.ts'
import { ask } from '../prompts.ts'
import { CliError } from '../cli-error.ts'
import { adminCall, nonEmpty } from './user.ts'

interface RoleOptions {
  tenant?: string
  json?: boolean
}

export function roleCommand(): Command {
  const role = new Command('role').description("Manage a tenant's roles: their hierarchy and responsibilities.")

  role
    .command('add <name>')
    .description('Create a role, optionally under a supervisor (parent) role.')
    .option('-t, --tenant <name>', 'tenant')
    .option('--parent <role>', 'supervisor role: it gets the access of this one')
    .option('--description <text>', 'what the role is for')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, options: RoleOptions & { parent?: string; description?: string }, command: Command) => {
      const tenant = await tenantOf(options)
      await withAdminContext(command, async (context) => {
        const created = await adminCall(async () => addRole(await context.tenant(tenant), name, options))
        printResult(options, created, () => `Role '${created.name}' added${created.parent ? ` under '${created.parent}'` : ''}.`)
      })
    })

  role
    .command('set-parent <role> [parent]')
    .description('Put a role under another (its supervisor), or make it a root with --none.')
    .option('-t, --tenant <name>', 'tenant')
    .option('--none', 'no parent: the role becomes a root')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, parent: string | undefined, options: RoleOptions & { none?: boolean }, command: Command) => {
      if (!parent && !options.none) throw new CliError('Name the parent role, or pass --none to make the role a root.')
      if (parent && options.none) throw new CliError('Give either a parent role or --none, not both.')
      const tenant = await tenantOf(options)
      await withAdminContext(command, async (context) => {
        const changed = await adminCall(async () => setRoleParent(await context.tenant(tenant), name, parent ?? null))
        printResult(options, changed, () => (changed.parent ? `Role '${changed.name}' is now under '${changed.parent}'.` : `Role '${changed.name}' is now a root.`))
      })
    })

  role
    .command('grant <role> <responsibility>')
    .description('Give a role a responsibility (declared by a plugin; see `responsibility list`).')
    .option('-t, --tenant <name>', 'tenant')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, responsibility: string, options: RoleOptions, command: Command) => {
      const tenant = await tenantOf(options)
      await withAdminContext(command, async (context) => {
        const changed = await adminCall(async () => grantResponsibility(await context.tenant(tenant), name, responsibility))
        printResult(options, changed, () => `Role '${changed.name}' has responsibility '${responsibility}'.`)
      })
    })

  role
    .command('revoke <role> <responsibility>')
    .description('Take a responsibility from a role.')
    .option('-t, --tenant <name>', 'tenant')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, responsibility: string, options: RoleOptions, command: Command) => {
      const tenant = await tenantOf(options)
      await withAdminContext(command, async (context) => {
        const changed = await adminCall(async () => revokeResponsibility(await context.tenant(tenant), name, responsibility))
        printResult(options, changed, () => `Role '${changed.name}' no longer has responsibility '${responsibility}'.`)
      })
    })

  role
    .command('remove <role>')
    .description('Delete a role (refused while it has child roles); its users lose it.')
    .option('-t, --tenant <name>', 'tenant')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, options: RoleOptions, command: Command) => {
      const tenant = await tenantOf(options)
      await withAdminContext(command, async (context) => {
        await adminCall(async () => removeRole(await context.tenant(tenant), name))
        printResult(options, { tenant, role: name, removed: true }, () => `Role '${name}' removed.`)
      })
    })

  role
    .command('list')
    .description('List the roles with their parent, responsibilities and number of users.')
    .option('-t, --tenant <name>', 'tenant')
    .option('--json', 'print the result as JSON')
    .action(async (options: RoleOptions, command: Command) => {
      const tenant = await tenantOf(options)
      await withAdminContext(command, async (context) => {
        const roles = await listRoles(await context.tenant(tenant))
        printResult(options, roles, () =>
          table(roles.map((r: RoleSummary) => ({ ...r, responsibilities: r.responsibilities.join(', ') })), ['name', 'parent', 'responsibilities', 'users']),
        )
      })
    })

  role
    .command('tree')
    .description('Show the role hierarchy, supervisors above the roles they oversee.')
    .option('-t, --tenant <name>', 'tenant')
    .option('--json', 'print the result as JSON')
    .action(async (options: RoleOptions, command: Command) => {
      const tenant = await tenantOf(options)
      await withAdminContext(command, async (context) => {
        const tree = await loadRoleTree((await context.tenant(tenant)).pool)
        printResult(options, tree, () => (tree.length === 0 ? '(no roles)' : drawTree(tree)))
      })
    })
  return role
}

async function tenantOf(options: RoleOptions): Promise<string> {
  return options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
}

/**
 * Sales
 * ├─ Clerks
 * └─ Managers
 */
function drawTree(roots: readonly RoleNode[]): string {
  return roots.map((root) => [root.name, ...(root.children.length ? [drawChildren(root.children, '')] : [])].join('\n')).join('\n')
}

function drawChildren(nodes: readonly RoleNode[], prefix: string): string {
  return nodes
    .map((node, i) => {
      const last = i === nodes.length - 1
      const below = node.children.length > 0 ? `\n${drawChildren(node.children, prefix + (last ? '   ' : '│  '))}` : ''
      return `${prefix}${last ? '└─ ' : '├─ '}${node.name}${below}`
    })
    .join('\n')
}
