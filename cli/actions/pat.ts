import type { Command } from 'commander'
import { issuePat, listPats, patRequestByNames, regeneratePat, revokePat, type PatItem } from '../../server/auth/pats.ts'
import { announceAccessChange } from '../../server/auth/access-listener.ts'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'
import { withAdminContext } from '../context.ts'
import { printResult, shownNames, table } from '../output.ts'
import { ask } from '../prompts.ts'
import { CliError, usageError } from '../cli-error.ts'
import { adminCall, nonEmpty, tenantOf } from './shared.ts'
import { quotedName } from '../../server/model/control-characters.ts'

interface PatOptions {
  tenant?: string
  user?: string
  name?: string
  days?: string
  responsibility?: string[]
  json?: boolean
}

export async function issue(options: PatOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  const user = options.user ?? (await ask('--user', 'Owner (user name):', nonEmpty))
  const name = options.name ?? (await ask('--name', 'Label:', nonEmpty))
  const days = options.days ?? (await ask('--days', 'Days until it expires (1-365):', validDays))
  if (validDays(days) !== true) throw usageError(`--days must be a whole number from 1 to 365, not ${quotedName(String(days))}.`)
  const responsibilities = options.responsibility ?? []
  await withAdminContext(command, async (context) => {
    const issued = await adminCall(async () => {
      const db = await context.tenant(tenant)
      const { owner, request } = await patRequestByNames(db, user, { name, expirationDays: Number(days), responsibilities })
      // The rules of pats.ts speak to the owner ("you"); here the admin acts for the owner,
      // so the refusals name the owner and the responsibilities as typed.
      const held = new Set(owner.responsibilities.values())
      const notHeld = responsibilities.filter((r) => !held.has(r))
      if (notHeld.length > 0) {
        throw new CliError(
          `User ${quotedName(user)} does not hold responsibilit${notHeld.length === 1 ? 'y' : 'ies'} ${notHeld.map(quotedName).join(', ')} in tenant '${tenant}'` +
            ` (holds: ${held.size ? [...held].sort().map(quotedName).join(', ') : 'none'}); a PAT may only use what its owner holds through roles.`,
        )
      }
      if (responsibilities.length === 0 && !(owner.hasFullAccess && owner.roleCount === 0)) {
        const why = !owner.hasFullAccess ? 'does not have full access' : `has ${owner.roleCount} role(s)`
        throw new CliError(
          `Without --responsibility a PAT is a full-access fallback, allowed only to a user with full access and no roles; user ${quotedName(user)} ${why}. Name the responsibilities with --responsibility.`,
        )
      }
      return issuePat(db, owner, request)
    })
    printResult(options, { ...issued, owner: user, responsibilities }, () =>
      [
        `PAT ${quotedName(issued.name)} (${issued.id}) of ${quotedName(user)} issued${issued.isFullAccessFallback ? ' as a full-access fallback' : ''}, expires ${issued.expiresAt}.`,
        'Secret (shown only now; use it as the password of user "pat" in HTTP Basic):',
        issued.secret,
      ].join('\n'),
    )
  })
}

export async function list(options: PatOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const db = await context.tenant(tenant)
    let userGuid: string | undefined
    if (options.user) {
      const { rows } = await db.pool.query(`select "Guid" from "User" where "Username" = $1`, [options.user])
      if (rows.length === 0) throw new CliError(`No user ${quotedName(options.user)} in tenant '${tenant}'.`, { code: 'NotFound' })
      userGuid = rows[0].Guid
    }
    const items = await described(db, await listPats(db, userGuid))
    printResult(options, items, () =>
      table(
        items.map((i) => ({ ...i, scope: i.isFullAccessFallback ? 'full access (fallback)' : shownNames(i.responsibilities), lastUsedAt: i.lastUsedAt ?? 'never' })),
        ['id', 'name', 'owner', 'status', 'scope', 'expiresAt', 'lastUsedAt'],
      ),
    )
  })
}

export const revoke = (id: string, options: PatOptions, command: Command) => change('revoke', id, options, command)
export const regenerate = (id: string, options: PatOptions, command: Command) => change('regenerate', id, options, command)

async function change(verb: 'revoke' | 'regenerate', id: string, options: PatOptions, command: Command): Promise<void> {
  const tenant = await tenantOf(options)
  await withAdminContext(command, async (context) => {
    const db = await context.tenant(tenant)
    const item = await adminCall(() => (verb === 'revoke' ? revokePat(db, undefined, id) : regeneratePat(db, undefined, id)))
    await announceAccessChange(db.url)
    if (!item) throw new CliError(`No PAT ${quotedName(id)} in tenant '${tenant}'; \`entityctl pat list --tenant ${tenant}\` shows them.`, { code: 'NotFound' })
    printResult(options, item, () =>
      'secret' in item
        ? [`PAT ${quotedName(item.name)} regenerated, expires ${item.expiresAt}.`, 'New secret (shown only now):', item.secret].join('\n')
        : `PAT ${quotedName(item.name)} is ${item.status}.`,
    )
  })
}

/** A PAT as an admin reads it: its owner's user name and its responsibilities by name. */
async function described(db: TenantDatabase, items: PatItem[]): Promise<(PatItem & { owner: string; responsibilities: string[] })[]> {
  if (items.length === 0) return []
  const { rows: owners } = await db.pool.query<{ id: string; owner: string }>(
    `select p."Id" as id, u."Username" as owner from "_Pat" p join "User" u on u."Guid" = p."UserGuid" where p."Id" = any($1::uuid[])`,
    [items.map((i) => i.id)],
  )
  const { rows: names } = await db.pool.query<{ guid: string; name: string }>(
    `select "Guid" as guid, "Name" as name from "Responsibility" where "Guid" = any($1::uuid[])`,
    [[...new Set(items.flatMap((i) => i.responsibilityIds))]],
  )
  const ownerOf = new Map(owners.map((o) => [o.id, o.owner]))
  const nameOf = new Map(names.map((n) => [n.guid, n.name]))
  return items.map((item) => ({
    ...item,
    owner: ownerOf.get(item.id) ?? '',
    responsibilities: item.responsibilityIds.map((id) => nameOf.get(id) ?? id).sort(),
  }))
}

function validDays(value: string): true | string {
  const days = Number(value)
  return (Number.isInteger(days) && days >= 1 && days <= 365) || 'a whole number from 1 to 365'
}
