import { Command } from 'commander'
import { issuePat, listPats, patRequestByNames, regeneratePat, revokePat, type PatItem } from '../../server/auth/pats.ts'
import { announceAccessChange } from '../../server/auth/access-listener.ts'
import { withAdminContext } from '../context.ts'
import { printResult, table } from '../output.ts'
import { ask } from '../prompts.ts'
import { CliError } from '../cli-error.ts'
import { adminCall, nonEmpty } from './user.ts'

interface PatOptions {
  tenant?: string
  user?: string
  name?: string
  days?: string
  responsibility?: string[]
  json?: boolean
}

export function patCommand(): Command {
  const pat = new Command('pat').description('Personal access tokens: credentials for scripts, scoped to responsibilities.')

  pat
    .command('issue')
    .description('Issue a PAT for a user and print its secret (shown once). No --responsibility: a full-access fallback PAT, for a full-access user without roles.')
    .option('-t, --tenant <name>', 'tenant')
    .option('-u, --user <name>', 'user name of the owner')
    .option('-n, --name <label>', 'label of the PAT')
    .option('-d, --days <n>', 'days until it expires, 1 to 365')
    .option('-r, --responsibility <name...>', 'responsibilities the PAT may use (the owner must hold them)')
    .option('--json', 'print the result as JSON')
    .action(async (options: PatOptions, command: Command) => {
      const tenant = options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
      const user = options.user ?? (await ask('--user', 'Owner (user name):', nonEmpty))
      const name = options.name ?? (await ask('--name', 'Label:', nonEmpty))
      const days = Number(options.days ?? (await ask('--days', 'Days until it expires (1-365):', validDays)))
      if (validDays(String(days)) !== true) throw new CliError(`--days must be a whole number from 1 to 365, not '${options.days}'.`)
      await withAdminContext(command, async (context) => {
        const issued = await adminCall(async () => {
          const db = await context.tenant(tenant)
          const { owner, request } = await patRequestByNames(db, user, { name, expirationDays: days, responsibilities: options.responsibility ?? [] })
          return issuePat(db, owner, request)
        })
        printResult(options, issued, () =>
          [`PAT '${issued.name}' (${issued.id}) issued${issued.isFullAccessFallback ? ' as a full-access fallback' : ''}, expires ${issued.expiresAt}.`,
            'Secret (shown only now; use it as the password of user "pat" in HTTP Basic):', issued.secret].join('\n'),
        )
      })
    })

  pat
    .command('list')
    .description("List a tenant's PATs (a user's with --user); secrets are never shown.")
    .option('-t, --tenant <name>', 'tenant')
    .option('-u, --user <name>', 'only the PATs of this user')
    .option('--json', 'print the result as JSON')
    .action(async (options: PatOptions, command: Command) => {
      const tenant = options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
      await withAdminContext(command, async (context) => {
        const db = await context.tenant(tenant)
        let userGuid: string | undefined
        if (options.user) {
          const { rows } = await db.pool.query(`select "Guid" from "User" where "Username" = $1`, [options.user])
          if (rows.length === 0) throw new CliError(`No user '${options.user}' in tenant '${tenant}'.`)
          userGuid = rows[0].Guid
        }
        const items = await listPats(db, userGuid)
        printResult(options, items, () => table(items.map(row), ['id', 'name', 'status', 'expiresAt', 'lastUsedAt', 'scope']))
      })
    })

  for (const [verb, description] of [
    ['revoke', 'Revoke a PAT: refused at once on every server.'],
    ['regenerate', 'Give an active or expired PAT a new secret (printed once) and a new lifetime; the old secret stops working.'],
  ] as const) {
    pat
      .command(`${verb} <id>`)
      .description(description)
      .option('-t, --tenant <name>', 'tenant')
      .option('--json', 'print the result as JSON')
      .action(async (id: string, options: PatOptions, command: Command) => {
        const tenant = options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
        await withAdminContext(command, async (context) => {
          const db = await context.tenant(tenant)
          const item = await adminCall(() => (verb === 'revoke' ? revokePat(db, undefined, id) : regeneratePat(db, undefined, id)))
          await announceAccessChange(db.url)
          if (!item) throw new CliError(`No PAT '${id}' in tenant '${tenant}'; \`entityctl pat list --tenant ${tenant}\` shows them.`)
          printResult(options, item, () =>
            'secret' in item
              ? [`PAT '${item.name}' regenerated, expires ${item.expiresAt}.`, 'New secret (shown only now):', item.secret].join('\n')
              : `PAT '${item.name}' is ${item.status}.`,
          )
        })
      })
  }
  return pat
}

function validDays(value: string): true | string {
  const days = Number(value)
  return (Number.isInteger(days) && days >= 1 && days <= 365) || 'a whole number from 1 to 365'
}

function row(item: PatItem): Record<string, unknown> {
  return { ...item, scope: item.isFullAccessFallback ? 'full access (fallback)' : `${item.responsibilityIds.length} responsibilities` }
}
