// A tenant's EncryptionKey outside the config file: exported to a key file before its entry
// goes (`tenant remove --keep-database`, `tenant backup`), read back to reattach the data
// (`tenant add --encryption-key-file`, `tenant restore`), and replaced by a new key with
// every encrypted value re-encrypted (`tenant rotate-key`).
//
// A key file is one line: the key, 32 bytes in base64, as the config holds it. It is written
// with mode 600 and never over another file, so an export cannot destroy an earlier key.

import { createHash, randomBytes } from 'node:crypto'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import pg from 'pg'
import type { Config, TenantConfig } from '../config/load-config.ts'
import { readConfigFile, writeConfigFile } from '../config/load-config.ts'
import type { Model } from '../model/model.ts'
import { columnsOf } from '../persistence/entity-columns.ts'
import { quoteIdentifier as quote } from '../persistence/sql.ts'
import { SqlParameters } from '../persistence/sql-parameters.ts'
import { propertyCipher } from './property-encryption.ts'

export class TenantKeyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TenantAdminError'
  }
}

export function newEncryptionKey(): string {
  return randomBytes(32).toString('base64')
}

/** A short fingerprint that tells two keys apart without revealing either (backups record it). */
export function keyFingerprint(key: string): string {
  return `sha256:${createHash('sha256').update('entityctl key fingerprint\0').update(Buffer.from(key, 'base64')).digest('hex').slice(0, 16)}`
}

/** True when it wrote the file, false when the file held the key already. */
export async function writeKeyFile(path: string, key: string): Promise<boolean> {
  try {
    await writeFile(path, `${key}\n`, { mode: 0o600, flag: 'wx' })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      if ((await stat(path)).isDirectory()) throw new TenantKeyError(`${path} is a folder: name the key file in it (e.g. ${join(path, 'tenant.key')}).`)
      // The same key there already is fine (a second export); another key is never overwritten.
      if ((await readKeyFile(path).catch(() => undefined)) === key) return false
      throw new TenantKeyError(`${path} exists and holds another key; choose another file (an exported key is never overwritten).`)
    }
    throw new TenantKeyError(`Cannot write the key file ${path}: ${(error as Error).message}`)
  }
}

export async function readKeyFile(path: string): Promise<string> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new TenantKeyError(`Cannot read the key file ${path}: ${(error as Error).message}`)
  }
  const key = text.trim()
  if (!/^[A-Za-z0-9+/]{43}=$/.test(key) || Buffer.from(key, 'base64').length !== 32) {
    throw new TenantKeyError(`${path} does not hold an EncryptionKey (one line: 32 bytes, base64).`)
  }
  return key
}

const ROTATION_BATCH = 1000

export interface RotationReport {
  readonly tenant: string
  /** Encrypted values re-encrypted, over every entity. */
  readonly values: number
  readonly rows: number
  readonly fingerprint: string
}

/**
 * Puts every encrypted value of the tenant, and its canary, under a new key in one transaction.
 *
 * The config file is written twice, so that at every moment it holds a key that opens every
 * value: first the new key with the old one as PreviousEncryptionKey (a running server that
 * reloads it writes under the new key and reads both), then, after the commit, the new key
 * alone. `announce` is awaited after each write, for the server instances to learn of the
 * change (tenant-registry reload) before the next step. A rotation that stopped half-way is
 * finished by running it again: it re-encrypts what the previous key still opens.
 */
export async function rotateEncryptionKey(
  config: Config,
  model: Model,
  url: string,
  tenant: TenantConfig,
  options: { announce?: () => Promise<void>; progress?: (text: string) => void } = {},
): Promise<RotationReport> {
  const oldKey = tenant.EncryptionKey
  const previous = tenant.PreviousEncryptionKey
  // A rotation that stopped after its first write: the config's key is already the new one.
  const newKey = previous ? oldKey : newEncryptionKey()
  const readable = propertyCipher(tenant.name, newKey, previous ?? oldKey)
  const target = propertyCipher(tenant.name, newKey)
  await writeTenantKeys(config.path, tenant.name, { EncryptionKey: newKey, PreviousEncryptionKey: previous ?? oldKey })
  await options.announce?.()

  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  let values = 0
  let rows = 0
  try {
    await client.query('begin')
    for (const entity of model.entities.values()) {
      const encrypted = columnsOf(entity).filter((c) => c.encrypted)
      if (encrypted.length === 0) continue
      options.progress?.(`re-encrypting ${entity.name}`)
      const names = encrypted.map((c) => quote(c.column))
      // Locked as read: a concurrent write waits for the commit, then writes under the new key.
      const result = await client.query(`select "Guid", ${names.join(', ')} from ${quote(entity.table)} for update`)
      // One statement per batch of rows: a statement per row cost a round trip each.
      for (let start = 0; start < result.rows.length; start += ROTATION_BATCH) {
        const batch = result.rows.slice(start, start + ROTATION_BATCH)
        const columns = encrypted.map((c) => batch.map((row) => (row[c.column] === null ? null : target.encrypt(readable.decrypt(row[c.column])))))
        values += columns.flat().filter((v) => v !== null).length
        rows += batch.length
        const params = new SqlParameters()
        const arrays = [params.add(batch.map((row) => row.Guid), 'uuid[]'), ...columns.map((column) => params.add(column, 'text[]'))]
        await client.query(
          `update ${quote(entity.table)} as t set ${names.map((n, i) => `${n} = v.c${i}`).join(', ')}
             from unnest(${arrays.join(', ')}) as v(g, ${names.map((_, i) => `c${i}`).join(', ')})
            where t."Guid" = v.g`,
          params.values,
        )
      }
    }
    await client.query(`update "_EncryptionCheck" set "Canary" = $1 where "Id" = 1`, [target.encrypt('entityctl')])
    await client.query('commit')
  } catch (error) {
    await client.query('rollback').catch(() => {})
    throw error
  } finally {
    await client.end()
  }
  await writeTenantKeys(config.path, tenant.name, { EncryptionKey: newKey })
  await options.announce?.()
  return { tenant: tenant.name, values, rows, fingerprint: keyFingerprint(newKey) }
}

/** Replaces the tenant's key settings in the config file, keeping everything else as written. */
async function writeTenantKeys(path: string, tenant: string, keys: { EncryptionKey: string; PreviousEncryptionKey?: string }): Promise<void> {
  const file = readConfigFile(path)
  const entry = { ...(file.Tenants?.[tenant] ?? {}) }
  delete entry.PreviousEncryptionKey
  file.Tenants = { ...(file.Tenants ?? {}), [tenant]: { ...entry, ...keys } }
  await writeConfigFile(path, file)
}
