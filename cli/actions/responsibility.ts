import type { Command } from 'commander'
import { syncResponsibilities, type SyncReport } from '../../server/auth/responsibility-sync.ts'
import { announceAccessChange } from '../../server/auth/access-listener.ts'
import { withAdminContext } from '../context.ts'
import { printResult, shownNames, table } from '../output.ts'
import { CliError } from '../cli-error.ts'
import { tenantOf } from './shared.ts'
import { quotedName } from '../../server/model/control-characters.ts'

export async function list(options: { tenant?: string; json?: boolean }, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
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
          roles: shownNames(i.roles),
        })),
        ['name', 'permissions', 'roles', 'guid'],
      ),
    )
  })
}

export async function sync(options: { tenant?: string; json?: boolean }, command: Command): Promise<void> {
  await withAdminContext(command, async (context) => {
    const names = options.tenant ? [options.tenant] : [...context.config.Tenants.keys()]
    if (names.length === 0) throw new CliError('There are no tenants; add one with `entityctl tenant add <name>`.', { code: 'NotFound' })
    const reports: (SyncReport & { tenant: string })[] = []
    for (const name of names) {
      const db = await context.tenant(name)
      reports.push({ tenant: name, ...(await syncResponsibilities(db, context.model)) })
      await announceAccessChange(db.url)
    }
    printResult(options, options.tenant ? reports[0] : reports, () => reports.map(describe).join('\n'))
  })
}

function describe(report: SyncReport & { tenant: string }): string {
  const parts = [
    report.added.length ? `added ${shownNames(report.added)}` : '',
    report.changed.length ? `changed ${shownNames(report.changed)}` : '',
    report.removed.length ? `removed ${shownNames(report.removed)}` : '',
    ...report.removedFromRoles.map((r) => `role ${quotedName(r.role)} lost ${quotedName(r.responsibility)}`),
  ].filter(Boolean)
  return `${report.tenant}: ${parts.length ? parts.join('; ') : 'up to date'}`
}
