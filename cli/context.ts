// What admin commands share: the config, the model and the database server, opened on
// demand and closed when the command ends (the embedded PostgreSQL is started only if
// no server is running on its port, and stopped only if this command started it).

import type { Command } from 'commander'
import { configPath, loadConfig, projectPath, type Config } from '../server/config/load-config.ts'
import { loadModel } from '../server/model/load-plugins.ts'
import type { Model } from '../server/model/model.ts'
import { openDatabaseServer, type DatabaseServer } from '../server/tenancy/database-server.ts'
import { TenantRegistry } from '../server/tenancy/tenant-registry.ts'
import type { TenantDatabase } from '../server/tenancy/tenant-database.ts'
import { CliError } from './cli-error.ts'

export interface AdminContext {
  readonly config: Config
  readonly model: Model
  readonly server: DatabaseServer
  readonly tenants: TenantRegistry
  /** The tenant's database, or a CliError naming the known tenants. */
  tenant(name: string): Promise<TenantDatabase>
}

const quiet = { info: () => {}, warn: (m: string) => process.stderr.write(`${m}\n`), error: (m: string) => process.stderr.write(`${m}\n`) }

export async function withAdminContext<T>(command: Command, work: (context: AdminContext) => Promise<T>): Promise<T> {
  const config = loadConfig(configPath(command.optsWithGlobals().config))
  const model = await loadModel(projectPath(config.Server.PluginsDir))
  const server = await openDatabaseServer(config, quiet)
  const tenants = new TenantRegistry(config, model, server.url)
  try {
    return await work({
      config,
      model,
      server,
      tenants,
      tenant: async (name) => {
        const database = await tenants.get(name)
        if (!database) {
          const known = [...config.Tenants.keys()]
          throw new CliError(`No tenant '${name}'. Known tenants: ${known.length ? known.join(', ') : '(none; add one with `entityctl tenant add <name>`)'}.`)
        }
        return database
      },
    })
  } finally {
    await tenants.close()
    await server.stop()
  }
}
