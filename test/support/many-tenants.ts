// Many tenants, cheaply: one tenant is made the ordinary way (addTenant: database, schema,
// canary), its database is then copied with CREATE DATABASE … TEMPLATE, several at a time,
// and every copy is written to the config with its own EncryptionKey. A copy costs a file
// copy on the server (tens of milliseconds), not a schema migration.

import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, readConfigFile, writeConfigFile } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { addTenant } from '../../server/tenancy/tenant-admin.ts'
import { databaseUrl, dropDatabase, withServerClient } from '../../server/tenancy/database-server.ts'

export interface ManyTenants {
  readonly dir: string
  readonly configPath: string
  /** Tenant names, the template's first. */
  readonly tenants: readonly string[]
  readonly databases: readonly string[]
  /** Drops every database and the folder. */
  remove(): Promise<void>
}

export interface ManyTenantsOptions {
  readonly count: number
  readonly serverUrl: string
  readonly pluginsDir: string
  /** Merged into the config file (Server, Database, …). */
  readonly config?: Record<string, Record<string, unknown>>
  /** Copies made at the same time. */
  readonly parallel?: number
  /** Runs on the first tenant before it is copied (users, rows): every copy has it too. */
  readonly prepare?: (tenant: string, configPath: string) => Promise<void>
}

export async function createManyTenants(options: ManyTenantsOptions): Promise<ManyTenants> {
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-many-'))
  const configPath = join(dir, 'entityctl.json')
  const prefix = `m${randomBytes(3).toString('hex')}`
  writeFileSync(
    configPath,
    JSON.stringify({
      ...options.config,
      Server: { LogLevel: 'silent', PluginsDir: options.pluginsDir, ...options.config?.Server },
      Database: { ConnectionString: options.serverUrl, ...options.config?.Database },
      JWT: { SigningKey: randomBytes(32).toString('base64url') },
    }),
  )
  const databases: string[] = []
  const tenants: string[] = []
  const remove = async () => {
    for (let i = 0; i < databases.length; i += 8) {
      await Promise.all(databases.slice(i, i + 8).map((database) => dropDatabase(options.serverUrl, database)))
    }
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const template = `${prefix}-0`
    const model = await loadModel(options.pluginsDir)
    const added = await addTenant(loadConfig(configPath, {}), model, options.serverUrl, template)
    tenants.push(template)
    databases.push(added.database)
    await options.prepare?.(template, configPath)
    // The canary is encrypted with the template's key; each copy stores its own at its first start.
    await withServerClient(databaseUrl(options.serverUrl, added.database), (client) => client.query('delete from "_EncryptionCheck"'))
    const file = readConfigFile(configPath)
    const names = Array.from({ length: options.count - 1 }, (_, i) => `${prefix}-${i + 1}`)
    const parallel = options.parallel ?? 4
    for (let i = 0; i < names.length; i += parallel) {
      await Promise.all(
        names.slice(i, i + parallel).map(async (name) => {
          const database = `entityctl_${name.replaceAll('-', '_')}`
          await withServerClient(options.serverUrl, (client) => client.query(`create database "${database}" template "${added.database}"`))
          databases.push(database)
          tenants.push(name)
          file.Tenants[name] = { Database: database, EncryptionKey: randomBytes(32).toString('base64') }
        }),
      )
    }
    await writeConfigFile(configPath, file)
  } catch (error) {
    await remove()
    throw error
  }
  return { dir, configPath, tenants, databases, remove }
}
