import type { Command } from 'commander'
import { existsSync } from 'node:fs'
import { defaultDatabase, loadConfig, readConfigFile, TENANT_NAME, writeConfigFile } from '../../server/config/load-config.ts'
import { configFileOf } from '../config-file.ts'
import { withAdminContext } from '../context.ts'
import { printResult, progress, table } from '../output.ts'
import { ask, confirm, interactive } from '../prompts.ts'
import { CliError, usageError } from '../cli-error.ts'
import { configAnnouncer, runningServerUrl } from '../config-announce.ts'
import { adminCall } from './shared.ts'
import { quotedName } from '../../server/model/control-characters.ts'

export async function add(given: string | undefined, options: { json?: boolean; encryptionKeyFile?: string }, command: Command): Promise<void> {
  const name = given ?? (await ask('<name>', 'Tenant name:', validTenantName))
  // Refused before the plugins and the database are loaded.
  if (validTenantName(name) !== true) throw usageError(`${quotedName(name)} is not a valid tenant name: ${validTenantName(name)}.`)
  const path = configFileOf(command, { mayCreate: true })
  if (existsSync(path) && loadConfig(path).Tenants.has(name)) throw new CliError(`Tenant ${quotedName(name)} already exists.`)
  const encryptionKey = options.encryptionKeyFile ? await adminCall(async () => (await import('../../server/tenancy/tenant-keys.ts')).readKeyFile(options.encryptionKeyFile!)) : undefined
  const steps = progress(options)
  await withAdminContext(
    command,
    async ({ config, model, server }) => {
      const creating = !existsSync(config.path)
      steps.step(`creating database ${defaultDatabase(name)} and its schema`)
      const { addTenant } = await import('../../server/tenancy/tenant-admin.ts')
      const result = await adminCall(() => addTenant(config, model, server.url, name, { encryptionKey }))
      // Returns once every running instance serves it (cli/config-announce.ts).
      await configAnnouncer(config.path, server.url)()
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
    state: t.Disabled ? 'disabled' : t.Moving ? 'moving' : 'enabled',
  }))
  printResult(options, rows, () => table(rows, ['name', 'database', 'state']))
}

export async function remove(
  given: string | undefined,
  options: { yes?: boolean; keepDatabase?: boolean; exportKey?: string; json?: boolean },
  command: Command,
): Promise<void> {
  const name = given ?? (await ask('<name>', 'Tenant to remove:', validTenantName))
  // Asked before the plugins and the database are loaded.
  const tenant = loadConfig(configFileOf(command)).Tenants.get(name)
  if (!tenant) throw new CliError(`No tenant ${quotedName(name)}; \`entityctl tenant list\` shows them.`, { code: 'NotFound' })
  // Kept data without its key is unreadable data: the key leaves the config only once it is
  // somewhere else, a file or a terminal the admin is looking at.
  // A tenant with a connection string of its own keeps its database whatever the options.
  const keepsData = options.keepDatabase || Boolean(tenant.ConnectionString)
  // A key exported for a database about to be dropped would promise data that is gone.
  if (options.exportKey && !keepsData) {
    throw usageError(`--export-key keeps the key of a kept database, but without --keep-database the database of tenant '${name}' is dropped: add --keep-database to keep it, or leave out --export-key.`)
  }
  const printKey = keepsData && !options.exportKey
  if (printKey && (options.json || !interactive())) {
    const why = options.keepDatabase ? '--keep-database keeps' : `Tenant '${name}' has its own ConnectionString, so its database is kept, with`
    throw usageError(`${why} data encrypted with the tenant's EncryptionKey, which leaves the config: pass --export-key FILE to keep the key (or run on a terminal, where it is printed).`)
  }
  const what = keepsData ? `tenant '${name}' (its database is kept)` : `tenant '${name}' and ALL its data`
  if (!options.yes && !(await confirm(`Remove ${what}?`))) throw new CliError('Cancelled; nothing was removed.', { code: 'Cancelled' })
  if (options.exportKey) {
    const { writeKeyFile } = await import('../../server/tenancy/tenant-keys.ts')
    await adminCall(() => writeKeyFile(options.exportKey!, tenant.EncryptionKey))
  }
  // `tenant add NAME` reattaches only the database it makes, entityctl_<name> on the Database
  // server; a tenant kept elsewhere (moved, or a Database or ConnectionString set by hand) must
  // be written back with its setting, or `tenant add` would serve another, perhaps stale, copy.
  const { withoutPassword } = await import('../../server/tenancy/database-server.ts')
  const reattach = (keyFile: string) =>
    !tenant.ConnectionString && tenant.Database === defaultDatabase(name)
      ? `\`entityctl tenant add ${name} --encryption-key-file ${keyFile}\` reattaches it`
      : `to reattach it, write Tenants:${name} back in the config with ${tenant.ConnectionString ? `its ConnectionString (${withoutPassword(tenant.ConnectionString)})` : `Database ${tenant.Database}`} and the EncryptionKey in ${keyFile}: \`tenant add ${name}\` would use ${defaultDatabase(name)} instead`
  await withAdminContext(command, async ({ config, server }) => {
    const { removeTenant } = await import('../../server/tenancy/tenant-admin.ts')
    const { sharedWith } = await adminCall(() => removeTenant(config, server.url, name, options.keepDatabase ?? false, { announce: configAnnouncer(config.path, server.url) }))
    if (printKey) {
      process.stderr.write(`WARNING: the EncryptionKey of tenant '${name}' is printed below and is now in no file. Keep it safe: without it the kept database's encrypted properties are lost. ${reattach('FILE')} (FILE holding this line).\n`)
      process.stdout.write(`${tenant.EncryptionKey}\n`)
    }
    const shared = !keepsData && sharedWith.length > 0 ? ` Its database ${tenant.Database} is kept: tenant ${sharedWith.map((other) => `'${other}'`).join(', ')} uses it.` : ''
    const kept = options.exportKey ? ` Its database is kept; its key is in ${options.exportKey}: ${reattach(options.exportKey)}.` : shared
    printResult(
      options,
      { tenant: name, removed: true, ...(keepsData || shared ? { databaseKept: true } : {}), ...(shared ? { sharedWith } : {}), ...(options.exportKey ? { keyFile: options.exportKey } : {}) },
      () => `Tenant '${name}' removed.${kept}`,
    )
  })
}

export async function disable(name: string, options: { json?: boolean }, command: Command): Promise<void> {
  await setDisabled(name, true, options, command)
}

export async function enable(name: string, options: { json?: boolean }, command: Command): Promise<void> {
  await setDisabled(name, false, options, command)
}

/**
 * A change of the config file only: running servers see it there (server/config/config-watch.ts),
 * and apply it before the command returns when the database server runs (cli/config-announce.ts).
 */
async function setDisabled(name: string, disabled: boolean, options: { json?: boolean }, command: Command): Promise<void> {
  const path = configFileOf(command)
  const file = readConfigFile(path)
  const settings = file.Tenants?.[name]
  if (!settings) throw new CliError(`No tenant ${quotedName(name)}; \`entityctl tenant list\` shows them.`, { code: 'NotFound' })
  if (disabled) settings.Disabled = true
  else delete settings.Disabled
  // Left by a move that was killed (not interrupted: Ctrl-C removes it): enabling serves the tenant where its config points.
  if (!disabled) delete settings.Moving
  await writeConfigFile(path, file)
  await configAnnouncer(path, await runningServerUrl(path))()
  printResult(options, { tenant: name, disabled }, () =>
    disabled ? `Tenant '${name}' disabled: running servers refuse its requests and close its connections.` : `Tenant '${name}' enabled.`,
  )
}

function validTenantName(value: string): true | string {
  return TENANT_NAME.test(value) || 'lower-case letters, digits, - and _, starting with a letter, at most 40'
}
