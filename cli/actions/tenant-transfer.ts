import type { Command } from 'commander'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { withAdminContext } from '../context.ts'
import { printResult, progress, table } from '../output.ts'
import { configAnnouncer } from '../config-announce.ts'
import { adminCall } from './shared.ts'

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))

export async function backup(name: string, options: { out?: string; json?: boolean }, command: Command): Promise<void> {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, 'Z')
  const file = resolve(options.out ?? `${name}-${stamp}.entityctl-backup`)
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, server }) => {
      const { backupTenant } = await import('../../server/tenancy/tenant-transfer.ts')
      const result = await adminCall(() => backupTenant(config, server.url, name, file, version, (text) => steps.step(text)))
      steps.done()
      printResult(options, result, () =>
        [
          `Tenant '${name}': ${result.rows} rows in ${result.tables.length} tables backed up to ${result.file}.`,
          `Its EncryptionKey is in ${result.keyFile} (mode 600): keep it apart from the backup, and safe; a restore needs both.`,
        ].join('\n'),
      )
    },
    { progress: steps },
  )
}

export async function restore(file: string, options: { as: string; encryptionKeyFile?: string; json?: boolean }, command: Command): Promise<void> {
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, model, server, onInterrupt }) => {
      const { restoreTenant } = await import('../../server/tenancy/tenant-transfer.ts')
      const result = await adminCall(() =>
        restoreTenant(config, model, server.url, resolve(file), options.as, options.encryptionKeyFile, { progress: (text) => steps.step(text), onInterrupt }),
      )
      await configAnnouncer(config.path, server.url)()
      steps.done()
      printResult(options, result, () =>
        [
          `Tenant '${result.tenant}' restored from the backup of '${result.from}' (database ${result.database}): ${result.rows} rows, every table checked against the file.`,
          table(result.tables.map((t) => ({ table: t.table, rows: t.rows })), ['table', 'rows']),
        ].join('\n'),
      )
    },
    { progress: steps },
  )
}

export async function move(name: string, options: { to: string; json?: boolean }, command: Command): Promise<void> {
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, model, server, onInterrupt }) => {
      const { moveTenant } = await import('../../server/tenancy/tenant-transfer.ts')
      // Each config write is applied by every running instance before the move goes on (cli/config-announce.ts).
      const announce = configAnnouncer(config.path, server.url)
      const result = await adminCall(() => moveTenant(config, model, server.url, name, options.to, version, { progress: (text) => steps.step(text), onInterrupt, announce }))
      // Returns once every running instance serves it from its new place.
      await announce()
      steps.done()
      printResult(options, result, () =>
        [
          `Tenant '${name}' moved to ${result.to}: ${result.rows} rows, every table checked; its config entry now has that ConnectionString.`,
          `The old database (${result.previous}) is kept: drop it once the tenant serves from its new place.`,
        ].join('\n'),
      )
    },
    { progress: steps },
  )
}
