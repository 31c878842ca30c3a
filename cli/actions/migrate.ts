import type { Command } from 'commander'
import { migrateDatabase, type MigrationReport } from '../../server/tenancy/tenant-admin.ts'
import { withAdminContext } from '../context.ts'
import { printResult, progress, table } from '../output.ts'
import { CliError } from '../cli-error.ts'

export async function migrate(options: { tenant?: string; allowDataLoss?: boolean; json?: boolean }, command: Command): Promise<void> {
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, model, tenants }) => {
      const names = options.tenant ? [options.tenant] : [...config.Tenants.keys()]
      const reports: MigrationReport[] = []
      for (const name of names) {
        const tenant = config.Tenants.get(name)
        if (!tenant) throw new CliError(`No tenant '${name}'; \`entityctl tenant list\` shows them.`, { code: 'NotFound' })
        steps.step(`migrating tenant '${name}'`)
        reports.push(await migrateDatabase(name, tenants.urlOf(tenant), model, options.allowDataLoss ?? false))
      }
      steps.done()
      printResult(options, reports, () => table(reports.map((r) => ({ tenant: r.tenant, changes: r.statements })), ['tenant', 'changes']))
    },
    { progress: steps },
  )
}
