// Many tenants in seconds, for the tenants run: `tenant add` and `user add` are slow per call
// (a process, a migration), so they make the first tenant only; the others are copies of its
// database (CREATE DATABASE … TEMPLATE), each recorded in the configuration with its own
// EncryptionKey and its own encryption canary (the copied canary is of the first tenant's key:
// it is replaced through entityctl's verifyEncryptionKey, as `tenant add` does). Every database
// made is listed in <workDir>/tenant-databases.json before it exists, so the next run drops
// what an interrupted one left.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { verifyEncryptionKey } from '../../server/tenancy/tenant-admin.ts'
import { databaseUrl, dropDatabase, withClient } from './databases.ts'
import { newEncryptionKey, prepareEntityctl, recordTenants } from './entityctl-process.ts'
import type { EntityctlSetup, RecordedTenant } from './entityctl-process.ts'

export type ClonedTenants = { names: string[]; databases: string[] }

const recordPath = (setup: EntityctlSetup) => join(setup.workDir, 'tenant-databases.json')

/** `prefix-000` … `prefix-<n-1>`, all with the user of `setup` (username, password). */
export async function cloneTenants(setup: EntityctlSetup, prefix: string, count: number): Promise<ClonedTenants> {
  await dropRecordedDatabases(setup)
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`)
  const first = await prepareEntityctl({ ...setup, tenant: names[0] })
  const databases = [first]
  record(setup, databases)
  const clones: RecordedTenant[] = []
  for (const name of names.slice(1)) {
    const database = `entityctl_${name.replaceAll('-', '_')}`
    databases.push(database)
    record(setup, databases)
    await dropDatabase(setup.serverUrl, database)
    await withClient(setup.serverUrl, (client) => client.query(`CREATE DATABASE "${database}" TEMPLATE "${first}"`))
    const url = databaseUrl(setup.serverUrl, database)
    const encryptionKey = newEncryptionKey()
    await withClient(url, (client) => client.query('DELETE FROM "_EncryptionCheck"'))
    await verifyEncryptionKey(name, url, encryptionKey)
    clones.push({ name, database, encryptionKey })
  }
  recordTenants(setup, clones)
  return { names, databases }
}

/** Drops the databases of this run, or of an interrupted earlier one. */
export async function dropRecordedDatabases(setup: EntityctlSetup): Promise<void> {
  if (!existsSync(recordPath(setup))) return
  for (const database of JSON.parse(readFileSync(recordPath(setup), 'utf8')) as string[]) {
    await dropDatabase(setup.serverUrl, database)
  }
  record(setup, [])
}

function record(setup: EntityctlSetup, databases: string[]): void {
  writeFileSync(recordPath(setup), JSON.stringify(databases))
}
