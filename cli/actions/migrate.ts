import type { Command } from 'commander'
import type { TenantMigration } from '../../server/migrations/migrate-tenant.ts'
import { withAdminContext } from '../context.ts'
import { printResult, progress, table } from '../output.ts'
import { CliError } from '../cli-error.ts'
import { quotedName } from '../../server/model/control-characters.ts'

interface MigrateOptions {
  tenant?: string
  allowDataLoss?: boolean
  plan?: boolean
  json?: boolean
}

/** One tenant's line of the answer (--json: this object). */
interface TenantReport {
  readonly tenant: string
  /** `planned` (--plan), `applied`, `refused` (it would lose data). */
  readonly status: 'planned' | 'applied' | 'refused'
  readonly statements: number
  readonly sql: readonly string[]
  readonly renames: readonly string[]
  readonly losses: readonly string[]
  readonly unmanaged: readonly string[]
  /** Whether the recorded schema version is the plugins' (before this command). */
  readonly current: boolean
}

export async function migrate(options: MigrateOptions, command: Command): Promise<void> {
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, model, tenants }) => {
      const [{ migrateTenant, DestructiveMigrationError }, { withClusterLock }] = await Promise.all([
        import('../../server/migrations/migrate-tenant.ts'),
        import('../../server/migrations/migration-locks.ts'),
      ])
      const names = options.tenant ? [options.tenant] : [...config.Tenants.keys()]
      for (const name of names) {
        if (!config.Tenants.has(name)) throw new CliError(`No tenant ${quotedName(name)}; \`entityctl tenant list\` shows them.`, { code: 'NotFound' })
      }
      const reports: TenantReport[] = []
      const run = async () => {
        for (const name of names) {
          const url = tenants.urlOf(config.Tenants.get(name)!)
          steps.step(`${options.plan ? 'planning' : 'migrating'} tenant '${name}'`)
          try {
            const result = await migrateTenant(name, url, model, {
              allowDataLoss: options.allowDataLoss,
              planOnly: options.plan,
              by: 'migrate',
              onLockWait: ({ table, attempt, attempts }) =>
                steps.step(`migrating tenant '${name}': ${table ? `table ${table} is` : 'a table is'} held by another transaction; trying again (${attempt} of ${attempts})`),
            })
            reports.push(report(result, options.plan ? 'planned' : 'applied'))
          } catch (error) {
            if (!(error instanceof DestructiveMigrationError)) throw error
            reports.push(report({ tenant: name, plan: error.plan, schemaVersion: '', previousVersion: undefined, applied: false }, 'refused'))
          }
        }
      }
      if (options.plan) await run()
      else await withClusterLock(tenants.serverUrl, run, () => steps.step('waiting for another migration job (a starting server or another migrate) to finish'))
      steps.done()
      const refused = reports.filter((r) => r.status === 'refused')
      if (refused.length > 0 && !options.json) {
        printResult(options, reports, () => describe(reports))
        throw new CliError(
          refused
            .map((r) => `Migration of tenant '${r.tenant}' would lose data and was not applied:\n  ${r.losses.join('\n  ')}`)
            .join('\n') +
            `\nRun \`entityctl migrate --plan --tenant ${refused[0].tenant}\` to see it and \`entityctl migrate --allow-data-loss --tenant ${refused[0].tenant}\` to apply it anyway.`,
        )
      }
      printResult(options, reports, () => (options.plan ? describe(reports) : table(reports.map((r) => ({ tenant: r.tenant, changes: r.statements })), ['tenant', 'changes'])))
      // Thrown, not process.exitCode: main ends the process with the exit code of the error.
      if (refused.length > 0) throw new CliError('A migration was refused.', { silent: true })
    },
    { progress: steps },
  )
}

function report(result: TenantMigration, status: TenantReport['status']): TenantReport {
  const plan = result.plan
  return {
    tenant: result.tenant,
    status,
    statements: plan?.statements.length ?? 0,
    sql: plan?.statements ?? [],
    renames: plan?.renames ?? [],
    losses: plan?.losses ?? [],
    unmanaged: plan?.unmanaged ?? [],
    current: result.previousVersion !== undefined && result.previousVersion === result.schemaVersion,
  }
}

/** The plan as a person reads it: per tenant, what runs, what it loses, what is left alone. */
function describe(reports: readonly TenantReport[]): string {
  return reports
    .map((r) => {
      const head =
        r.status === 'refused'
          ? `tenant ${r.tenant}: REFUSED, would lose data (apply with --allow-data-loss --tenant ${r.tenant})`
          : r.sql.length === 0
            ? `tenant ${r.tenant}: up to date`
            : `tenant ${r.tenant}: ${r.sql.length} statement${r.sql.length === 1 ? '' : 's'}${r.losses.length > 0 ? ', WOULD LOSE DATA (a start refuses it; --allow-data-loss applies it)' : ''}`
      const lines = [
        ...r.renames.map((rename) => `  rename     ${rename}`),
        ...r.sql.map((sql) => `  sql        ${sql.replace(/\s+/g, ' ')};`),
        ...r.losses.map((loss) => `  loses      ${loss}`),
        ...r.unmanaged.map((object) => `  unmanaged  ${object} (not made by entityctl: left alone)`),
      ]
      return [head, ...lines].join('\n')
    })
    .join('\n\n')
}
