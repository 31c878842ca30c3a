import type { Command } from 'commander'
import { existsSync } from 'node:fs'
import { loadConfig, readConfigFile, TENANT_NAME, writeConfigFile } from '../../server/config/load-config.ts'
import { configFileOf } from '../config-file.ts'
import { withAdminContext } from '../context.ts'
import { printResult, progress, table } from '../output.ts'
import { ask, confirm } from '../prompts.ts'
import { CliError, usageError } from '../cli-error.ts'
import { adminCall } from './shared.ts'

export async function add(given: string | undefined, options: { json?: boolean }, command: Command): Promise<void> {
  const name = given ?? (await ask('<name>', 'Tenant name:', validTenantName))
  // Refused before the plugins and the database are loaded.
  if (validTenantName(name) !== true) throw usageError(`'${name}' is not a valid tenant name: ${validTenantName(name)}.`)
  const path = configFileOf(command, { mayCreate: true })
  if (existsSync(path) && loadConfig(path).Tenants.has(name)) throw new CliError(`Tenant '${name}' already exists.`)
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, model, server }) => {
      const creating = !existsSync(config.path)
      steps.step(`creating database entityctl_${name.replaceAll('-', '_')} and its schema`)
      const { addTenant } = await import('../../server/tenancy/tenant-admin.ts')
      const result = await adminCall(() => addTenant(config, model, server.url, name))
      steps.done()
      printResult(options, { tenant: name, ...result, config: config.path }, () =>
        [
          `Tenant '${name}' added (database ${result.database}${result.created ? '' : ', existing database reused'}).`,
          ...(creating ? [`Config file ${config.path} created.`] : []),
        ].join('\n'),
      )
    },
    { mayCreateConfig: true, progress: steps },
  )
}

export async function list(options: { json?: boolean }, command: Command): Promise<void> {
  // Reads the config only: no database, no plugins.
  const config = loadConfig(configFileOf(command))
  const rows = [...config.Tenants.values()].map((t) => ({
    name: t.name,
    database: t.ConnectionString ? '(own connection string)' : t.Database,
    state: t.Disabled ? 'disabled' : 'enabled',
  }))
  printResult(options, rows, () => table(rows, ['name', 'database', 'state']))
}

export async function remove(given: string | undefined, options: { yes?: boolean; keepDatabase?: boolean; json?: boolean }, command: Command): Promise<void> {
  const name = given ?? (await ask('<name>', 'Tenant to remove:', validTenantName))
  // Asked before the plugins and the database are loaded.
  if (!loadConfig(configFileOf(command)).Tenants.has(name)) throw new CliError(`No tenant '${name}'; \`entityctl tenant list\` shows them.`, { code: 'NotFound' })
  const what = options.keepDatabase ? `tenant '${name}' (its database is kept)` : `tenant '${name}' and ALL its data`
  if (!options.yes && !(await confirm(`Remove ${what}?`))) throw new CliError('Cancelled; nothing was removed.', { code: 'Cancelled' })
  await withAdminContext(command, async ({ config, server }) => {
    const { removeTenant } = await import('../../server/tenancy/tenant-admin.ts')
    await adminCall(() => removeTenant(config, server.url, name, options.keepDatabase ?? false))
    printResult(options, { tenant: name, removed: true }, () => `Tenant '${name}' removed.`)
  })
}

export async function disable(name: string, options: { json?: boolean }, command: Command): Promise<void> {
  await setDisabled(name, true, options, command)
}

export async function enable(name: string, options: { json?: boolean }, command: Command): Promise<void> {
  await setDisabled(name, false, options, command)
}

/** A change of the config file only: running servers see it there (server/config/config-watch.ts). */
async function setDisabled(name: string, disabled: boolean, options: { json?: boolean }, command: Command): Promise<void> {
  const path = configFileOf(command)
  const file = readConfigFile(path)
  const settings = file.Tenants?.[name]
  if (!settings) throw new CliError(`No tenant '${name}'; \`entityctl tenant list\` shows them.`, { code: 'NotFound' })
  if (disabled) settings.Disabled = true
  else delete settings.Disabled
  await writeConfigFile(path, file)
  printResult(options, { tenant: name, disabled }, () =>
    disabled ? `Tenant '${name}' disabled: running servers refuse its requests and close its connections.` : `Tenant '${name}' enabled.`,
  )
}

function validTenantName(value: string): true | string {
  return TENANT_NAME.test(value) || 'lower-case letters, digits, - and _, starting with a letter, at most 40'
}
