import type { Command } from 'commander'
import { withAdminContext } from '../context.ts'
import { printResult, progress } from '../output.ts'
import { configAnnouncer } from '../config-announce.ts'
import { adminCall } from './shared.ts'

export async function rotateKey(name: string, options: { json?: boolean }, command: Command): Promise<void> {
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, model, server }) => {
      const { rotateTenantKey } = await import('../../server/tenancy/tenant-admin.ts')
      steps.step(`rotating the EncryptionKey of tenant '${name}'`)
      const report = await adminCall(() => rotateTenantKey(config, model, server.url, name, { announce: configAnnouncer(config.path, server.url), progress: (text) => steps.step(text) }))
      steps.done()
      printResult(options, report, () =>
        [
          `Tenant '${name}' has a new EncryptionKey (${report.fingerprint}): ${report.values} encrypted values in ${report.rows} rows re-encrypted, in ${config.path}.`,
          'Backups taken before are restored with their own key file; back up the new key: `entityctl tenant backup`.',
        ].join('\n'),
      )
    },
    { progress: steps },
  )
}
