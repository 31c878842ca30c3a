// What admin commands share: the config, the model and the database server, opened on
// demand and closed when the command ends (the embedded PostgreSQL is started only if
// no server is running on its port, and stopped only if this command started it).
// Loaded only by command actions (cli/actions/*), never to print help.

import type { Command } from 'commander'
import { loadConfig, projectPath, type Config } from '../server/config/load-config.ts'
import type { Model } from '../server/model/model.ts'
import type { DatabaseServer } from '../server/tenancy/database-server.ts'
import type { TenantRegistry } from '../server/tenancy/tenant-registry.ts'
import type { TenantDatabase } from '../server/tenancy/tenant-database.ts'
import { CliError, EXIT } from './cli-error.ts'
import { configFileOf } from './config-file.ts'
import { unreachable } from './database-hint.ts'
import type { Progress } from './output.ts'
import { quotedName } from '../server/model/control-characters.ts'

export interface AdminContext {
  readonly config: Config
  readonly model: Model
  readonly server: DatabaseServer
  readonly tenants: TenantRegistry
  /** The tenant's database, or a CliError naming the known tenants. */
  tenant(name: string): Promise<TenantDatabase>
  /**
   * Work Ctrl-C must do before the command ends (a restore drops the database it is filling);
   * the function returned withdraws it, once the work it undoes is done.
   */
  onInterrupt(cleanup: () => Promise<unknown>): () => void
}

export interface ContextOptions {
  /** `tenant add` may create the config file. */
  readonly mayCreateConfig?: boolean
  readonly progress?: Progress
}

const quiet = { info: () => {}, warn: (m: string) => process.stderr.write(`${m}\n`), error: (m: string) => process.stderr.write(`${m}\n`) }

export async function withAdminContext<T>(command: Command, work: (context: AdminContext) => Promise<T>, options: ContextOptions = {}): Promise<T> {
  const config = loadConfig(configFileOf(command, { mayCreate: options.mayCreateConfig }))
  // Ctrl-C during the work: close the pools and stop the embedded PostgreSQL this command
  // started, then end with 130 (as a shell reports Ctrl-C), rather than leave them running.
  const open: Opened = { cleanups: new Set() }
  let stopping: Promise<never> | undefined
  const interrupted = () => {
    options.progress?.done()
    process.stderr.write('entityctl: interrupted; stopping\n')
    // Until the process exits, the work failing under the cleanups is not reported as a failure.
    stopping = new Promise<never>(() => {})
    void Promise.allSettled([...open.cleanups].map((cleanup) => cleanup()))
      .then(() => Promise.allSettled([open.tenants?.close(), open.server?.stop()]))
      .then(() => process.exit(EXIT.interrupted))
  }
  process.once('SIGINT', interrupted)
  try {
    return await withServer(config, work, options, open)
  } catch (error) {
    if (stopping) await stopping
    throw error
  } finally {
    process.removeListener('SIGINT', interrupted)
  }
}

/** What a command has opened so far: what Ctrl-C must close. */
interface Opened {
  server?: DatabaseServer
  tenants?: TenantRegistry
  readonly cleanups: Set<() => Promise<unknown>>
}

async function withServer<T>(config: Config, work: (context: AdminContext) => Promise<T>, options: ContextOptions, open: Opened): Promise<T> {
  // Each part of the server is imported when the work reaches it, after the progress line
  // that says so: the imports take a good part of a command's time on a busy machine.
  options.progress?.step(`loading the plugins of ${projectPath(config.Server.PluginsDir)}`)
  const { loadModel } = await import('../server/model/load-plugins.ts')
  const model = await loadModel(projectPath(config.Server.PluginsDir))
  const used = new Set<string>()
  options.progress?.step(
    config.Database.ConnectionString ? 'connecting to the database server' : `starting the embedded PostgreSQL (port ${config.Database.EmbeddedPort})`,
  )
  const [{ openDatabaseServer }, { TenantRegistry }] = await Promise.all([
    import('../server/tenancy/database-server.ts'),
    import('../server/tenancy/tenant-registry.ts'),
  ])
  const server = await openDatabaseServer(config, quiet).catch((error) => {
    throw unreachable(error, config, used) ?? error
  })
  open.server = server
  const tenants = new TenantRegistry(administered(config), model, server.url)
  open.tenants = tenants
  try {
    return await work({
      config,
      model,
      server,
      tenants,
      tenant: async (name) => {
        used.add(name)
        const database = await tenants.get(name)
        if (!database) {
          const known = [...config.Tenants.keys()]
          throw new CliError(`No tenant ${quotedName(name)}. Known tenants: ${known.length ? known.join(', ') : '(none; add one with `entityctl tenant add <name>`)'}.`, {
            code: 'NotFound',
          })
        }
        return database
      },
      onInterrupt: (cleanup) => {
        open.cleanups.add(cleanup)
        return () => open.cleanups.delete(cleanup)
      },
    })
  } catch (error) {
    throw unreachable(error, config, used) ?? error
  } finally {
    options.progress?.done()
    await tenants.close()
    await server.stop()
  }
}

/**
 * The configuration as the admin commands open it: a disabled tenant too. Disabling refuses
 * the tenant's requests to the API (README, Tenants:<name>:Disabled), not its administration:
 * its users, roles and PATs are managed, and its responsibilities synced, as backup and
 * migrate already read it.
 */
function administered(config: Config): Config {
  return { ...config, Tenants: new Map([...config.Tenants].map(([name, tenant]) => [name, { ...tenant, Disabled: false }])) }
}
