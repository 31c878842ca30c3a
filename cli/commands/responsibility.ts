import { Command } from 'commander'
import { syncResponsibilities, type SyncReport } from '../../server/auth/responsibility-sync.ts'
import { announceAccessChange } from '../../server/auth/access-listener.ts'
import { withAdminContext } from '../context.ts'
import { printResult, table } from '../output.ts'
import { ask } from '../prompts.ts'
import { CliError } from '../cli-error.ts'
import { nonEmpty } from './user.ts'

export function responsibilityCommand(): Command {
  const responsibility = new Command('responsibility').description('Responsibilities: declared by plugins, recorded per tenant, granted to roles.')

  responsibility
    .command('list')
    .description("List a tenant's responsibilities with their permissions and the roles that have them.")
    .option('-t, --tenant <name>', 'tenant')
    .option('--json', 'print the result as JSON')
    .action(async (options: { tenant?: string; json?: boolean }, command: Command) => {
      const tenant = options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
      await withAdminContext(command, async (context) => {
        const db = await context.tenant(tenant)
        const { rows } = await db.pool.query(
          `select s."Guid" as guid, s."Name" as name, s."Description" as description, s."Permissions" as permissions,
                  coalesce((select array_agg(r."Name" order by r."Name") from "RoleResponsibility" rr
                              join "Role" r on r."Guid" = rr."Role_Guid" where rr."Responsibility_Guid" = s."Guid"), '{}') as roles
             from "Responsibility" s order by s."Name"`,
        )
        const items = rows.map((row) => ({ ...row, permissions: row.permissions ? JSON.parse(row.permissions) : {} }))
        printResult(options, items, () =>
          table(
            items.map((i) => ({
              ...i,
              permissions: Object.entries(i.permissions as Record<string, string[]>).map(([e, p]) => `${e}: ${p.join(' ')}`).join('; '),
              roles: i.roles.join(', '),
            })),
            ['name', 'permissions', 'roles', 'guid'],
          ),
        )
      })
    })

  responsibility
    .command('sync')
    .description("Record the plugins' responsibilities in the tenant (every tenant by default); the server also does it at start.")
    .option('-t, --tenant <name>', 'only this tenant')
    .option('--json', 'print the result as JSON')
    .action(async (options: { tenant?: string; json?: boolean }, command: Command) => {
      await withAdminContext(command, async (context) => {
        const names = options.tenant ? [options.tenant] : [...context.config.Tenants.keys()]
        if (names.length === 0) throw new CliError('There are no tenants; add one with `entityctl tenant add <name>`.')
        const reports: (SyncReport & { tenant: string })[] = []
        for (const name of names) {
          const db = await context.tenant(name)
          reports.push({ tenant: name, ...(await syncResponsibilities(db, context.model)) })
          await announceAccessChange(db.url)
        }
        printResult(options, options.tenant ? reports[0] : reports, () => reports.map(describe).join('\n'))
      })
    })
  return responsibility
}

function describe(report: SyncReport & { tenant: string }): string {
  const parts = [
    report.added.length ? `added ${report.added.join(', ')}` : '',
    report.changed.length ? `changed ${report.changed.join(', ')}` : '',
    report.removed.length ? `removed ${report.removed.join(', ')}` : '',
    ...report.removedFromRoles.map((r) => `role '${r.role}' lost '${r.responsibility}'`),
  ].filter(Boolean)
  return `${report.tenant}: ${parts.length ? parts.join('; ') : 'up to date'}`
}
