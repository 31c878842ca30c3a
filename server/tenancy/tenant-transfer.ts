// Backup, restore and move of whole tenants, as the CLI runs them: the file format and its
// checks are tenant-backup.ts; here the files, the databases and the config entries.

import { constants, createReadStream, createWriteStream } from 'node:fs'
import { access, rename, rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { PassThrough } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import pg from 'pg'
import type { Config } from '../config/load-config.ts'
import { defaultDatabase, readConfigFile, TENANT_NAME, writeConfigFile } from '../config/load-config.ts'
import type { Model } from '../model/model.ts'
import { CommandLineDatabaseError, createDatabase, databaseExists, databaseUrl, dropDatabase, sameDatabase, withoutPassword } from './database-server.ts'
import {
  backupLines,
  BackupError,
  hasTables,
  readBackupHeader,
  restoreRows,
  writeBackup,
  type BackupHeader,
  type ProgressReport,
  type TableSummary,
} from './tenant-backup.ts'
import { keyFingerprint, readKeyFile, writeKeyFile } from './tenant-keys.ts'
import { migrateDatabase, refuseDatabaseInUse, TenantAdminError, verifyEncryptionKey } from './tenant-admin.ts'
import { quotedName } from '../model/control-characters.ts'

/** Level 1: a third of the size uncompressed; level 6 saved 2 % more for more CPU (measured: git log of this line). */
const GZIP_LEVEL = 1

export interface BackupResult {
  readonly tenant: string
  readonly file: string
  readonly keyFile: string
  readonly tables: readonly TableSummary[]
  readonly rows: number
}

/**
 * Writes the tenant's backup to `file` (gzip) and its EncryptionKey to `file`.key (mode 600).
 * The backup goes to a temporary file renamed at the end: a failed one leaves nothing, nor
 * the key file this run wrote.
 */
export async function backupTenant(config: Config, serverUrl: string, name: string, file: string, entityctl: string, progress?: ProgressReport): Promise<BackupResult> {
  const tenant = config.Tenants.get(name)
  if (!tenant) throw new TenantAdminError(`No tenant ${quotedName(name)}; \`entityctl tenant list\` shows them.`)
  const url = tenant.ConnectionString || databaseUrl(serverUrl, tenant.Database)
  // A key that does not open the data would make a backup nobody can read.
  await verifyEncryptionKey(name, url, tenant.EncryptionKey, tenant.PreviousEncryptionKey)
  if (tenant.PreviousEncryptionKey) throw new TenantAdminError(`Tenant '${name}' is in the middle of a key rotation; finish it with \`entityctl tenant rotate-key ${name}\` first.`)
  await checkBackupTarget(file, name)
  const keyFile = `${file}.key`
  const keyWritten = await writeKeyFile(keyFile, tenant.EncryptionKey)
  const temporary = `${file}.${process.pid}.partial`
  const gzip = createGzip({ level: GZIP_LEVEL })
  const written = pipeline(gzip, createWriteStream(temporary, { mode: 0o600, flags: 'wx' }))
  try {
    const tables = await writeBackup(url, gzip, { tenant: name, entityctl, keyFingerprint: keyFingerprint(tenant.EncryptionKey) }, progress)
    gzip.end()
    await written
    await rename(temporary, file)
    return { tenant: name, file, keyFile, tables, rows: tables.reduce((sum, t) => sum + t.rows, 0) }
  } catch (error) {
    gzip.destroy()
    await written.catch(() => {})
    await rm(temporary, { force: true })
    // A key beside no backup would pass for one's; one that was there already belongs to an earlier backup.
    if (keyWritten) await rm(keyFile, { force: true })
    throw error
  }
}

/**
 * Refuses a backup file that cannot be written before anything is: a folder given as the file
 * (`--out /tmp` wrote the key to /tmp.key, then failed), or one in a folder that does not exist.
 */
async function checkBackupTarget(file: string, tenant: string): Promise<void> {
  const target = await stat(file).catch(() => undefined)
  if (target?.isDirectory()) throw new TenantAdminError(`${file} is a folder: name the backup file in it (e.g. ${join(file, `${tenant}.entityctl-backup`)}).`)
  const folder = await stat(dirname(file)).catch(() => undefined)
  if (!folder?.isDirectory()) throw new TenantAdminError(`Cannot write the backup ${file}: the folder ${dirname(file)} does not exist.`)
}

export interface RestoreResult {
  readonly tenant: string
  readonly database: string
  readonly from: string
  readonly tables: readonly TableSummary[]
  readonly rows: number
}

/**
 * Creates tenant `name` from a backup file: a new database, the schema of the plugins, the
 * rows checked against the file, the config entry with the backup's key (from `keyFile`,
 * default the file beside the backup). A failed restore drops the database it created.
 */
export async function restoreTenant(
  config: Config,
  model: Model,
  serverUrl: string,
  file: string,
  name: string,
  keyFile: string | undefined,
  options: { progress?: ProgressReport; onInterrupt?: (cleanup: () => Promise<unknown>) => () => void } = {},
): Promise<RestoreResult> {
  if (!TENANT_NAME.test(name)) throw new TenantAdminError(`${quotedName(name)} is not a valid tenant name: lower-case letters, digits, - and _, starting with a letter, at most 40.`, { usage: true })
  if (config.Tenants.has(name)) throw new TenantAdminError(`Tenant ${quotedName(name)} already exists; restore under another name (--as) or remove it first.`)
  refuseDatabaseInUse(config, serverUrl, name, defaultDatabase(name))
  // The backup before its key: a mistyped backup path would otherwise be reported as a missing key file beside it.
  await access(file, constants.R_OK).catch((error) => {
    throw readError(error, file, false)
  })
  const key = await readKeyFile(keyFile ?? `${file}.key`)
  // pipe() would not pass on a read error (a missing file): the reader would wait for ever.
  const input = createGunzip()
  pipeline(createReadStream(file), input).catch((error) => input.destroy(error))
  let header: BackupHeader | undefined
  try {
    const lines = backupLines(input)
    header = await readBackupHeader(lines)
    checkKey(header, key)
    const database = defaultDatabase(name)
    if (await databaseExists(serverUrl, database)) {
      throw new TenantAdminError(`Database ${database} already exists (kept data of an earlier tenant '${name}'?): a restore needs a new database. Reattach it with \`tenant add ${name} --encryption-key-file\`, or drop it first.`)
    }
    const url = databaseUrl(serverUrl, database)
    await createDatabase(serverUrl, database)
    // Interrupted, the restore leaves no database behind unless the tenant is recorded:
    // the drop ends the restore's connections too.
    const withdraw = options.onInterrupt?.(async () => {
      if (!readConfigFile(config.path).Tenants?.[name]) await dropDatabase(serverUrl, database)
    })
    try {
      const tables = await restoreInto(url, name, model, key, header, lines, options.progress)
      await recordTenant(config.path, name, { Database: database, EncryptionKey: key })
      return { tenant: name, database, from: header.tenant, tables, rows: tables.reduce((sum, t) => sum + t.rows, 0) }
    } catch (error) {
      await dropDatabase(serverUrl, database)
      throw error
    } finally {
      withdraw?.()
    }
  } catch (error) {
    throw readError(error, file, header !== undefined)
  } finally {
    input.destroy()
  }
}

export interface MoveResult {
  readonly tenant: string
  readonly to: string
  readonly tables: readonly TableSummary[]
  readonly rows: number
  /** The database the tenant was in: kept, for the admin to drop once the move is trusted. */
  readonly previous: string
}

/**
 * Copies the tenant to the database `target` names (created when missing; it must hold no
 * tables), checks every table, then points the tenant's config entry at it. The old database
 * is kept. Running servers follow the config: the tenant is out of service for the copy
 * (`Moving`: its requests answered 503, its pools closed once their requests are done), and
 * the copy starts only when no session is left on the source, so no write acknowledged to a
 * client can land there after the copy. `announce` is awaited after each config write (for
 * running servers to apply it). Any failure, or Ctrl-C, leaves the tenant served where it was.
 */
export async function moveTenant(
  config: Config,
  model: Model,
  serverUrl: string,
  name: string,
  target: string,
  entityctl: string,
  options: { progress?: ProgressReport; onInterrupt?: (cleanup: () => Promise<unknown>) => () => void; announce?: () => Promise<void> } = {},
): Promise<MoveResult> {
  const { progress } = options
  const announce = options.announce ?? (async () => {})
  const tenant = config.Tenants.get(name)
  if (!tenant) throw new TenantAdminError(`No tenant ${quotedName(name)}; \`entityctl tenant list\` shows them.`)
  if (tenant.PreviousEncryptionKey) throw new TenantAdminError(`Tenant '${name}' is in the middle of a key rotation; finish it with \`entityctl tenant rotate-key ${name}\` first.`)
  if (tenant.Moving) {
    throw new TenantAdminError(`Tenant '${name}' is being moved already (Tenants:${name}:Moving); if no move of it runs (one was killed), \`entityctl tenant enable ${name}\` serves it again from where its config points.`)
  }
  const source = tenant.ConnectionString || databaseUrl(serverUrl, tenant.Database)
  let targetUrl: URL
  try {
    targetUrl = new URL(target)
  } catch {
    // Not echoed: a value that is not a URL may still hold a password.
    throw new TenantAdminError('--to must be a PostgreSQL connection string (postgres://user@host:port/database); the value given is not a URL.', { usage: true })
  }
  const database = decodeURIComponent(targetUrl.pathname.slice(1))
  if (!/^postgres(ql)?:$/.test(targetUrl.protocol) || !database) {
    throw new TenantAdminError(`--to must name the target database: postgres://user@host:port/database, not '${withoutPassword(target)}'.`, { usage: true })
  }
  if (sameDatabase(source, target)) throw new TenantAdminError(`Tenant '${name}' is already in ${withoutPassword(target)}.`)
  const targetServer = databaseUrl(target, 'postgres')
  // The first contact with the target: failing here, it is --to that needs checking.
  const created = !(await databaseExists(targetServer, database).catch((error) => {
    throw new CommandLineDatabaseError('--to', target, error)
  }))
  if (created) await createDatabase(targetServer, database)
  else if (await hasTables(target)) throw new TenantAdminError(`${withoutPassword(target)} already holds tables; a move needs an empty database.`)
  // Undone by whoever fails first: the move, or Ctrl-C. A disabled tenant stays disabled.
  const takenOut = !tenant.Disabled
  const undo = async () => {
    if (created && readConfigFile(config.path).Tenants?.[name]?.ConnectionString !== target) await dropDatabase(targetServer, database)
    if (takenOut && (await setMoving(config.path, name, false))) await announce()
  }
  const withdraw = options.onInterrupt?.(undo)
  try {
    if (takenOut) {
      progress?.('taking the tenant out of service')
      await setMoving(config.path, name, true)
      await announce()
    }
    await waitForNoSessions(name, source, config.ApiOptions.QueryTimeoutSeconds + SESSION_GRACE_SECONDS, progress)
    // The backup streams straight into the restore: no file, one snapshot of the source.
    const channel = new PassThrough({ highWaterMark: 1 << 20 })
    const fingerprint = keyFingerprint(tenant.EncryptionKey)
    const written = writeBackup(source, channel, { tenant: name, entityctl, keyFingerprint: fingerprint }, progress).finally(() => channel.end())
    const lines = backupLines(channel)
    const restored = (async () => {
      const header = await readBackupHeader(lines)
      return restoreInto(target, name, model, tenant.EncryptionKey, header, lines, progress)
    })()
    const [tables] = await Promise.all([restored, written]).catch(async (error) => {
      channel.destroy()
      await Promise.allSettled([restored, written])
      throw error
    })
    // Repointed and back in service in one write: no server serves the tenant from the old database again.
    const file = readConfigFile(config.path)
    const entry = { ...(file.Tenants?.[name] ?? {}) }
    delete entry.Database
    delete entry.Moving
    await recordTenant(config.path, name, { ...entry, ConnectionString: target })
    return { tenant: name, to: withoutPassword(target), tables, rows: tables.reduce((sum, t) => sum + t.rows, 0), previous: withoutPassword(source) }
  } catch (error) {
    await undo().catch(() => {})
    throw error
  } finally {
    withdraw?.()
  }
}

/** A moment for a request whose statement ended to give its connection back. */
const SESSION_GRACE_SECONDS = 5

/** Sets or removes the tenant's Moving flag in the config file; whether the file changed. */
async function setMoving(path: string, name: string, moving: boolean): Promise<boolean> {
  const file = readConfigFile(path)
  const entry = file.Tenants?.[name]
  if (!entry || Boolean(entry.Moving) === moving) return false
  if (moving) entry.Moving = true
  else delete entry.Moving
  await writeConfigFile(path, file)
  return true
}

/**
 * Waits until no other session is connected to the tenant's database: running servers close
 * its pool once their requests on it are done, and no statement of theirs runs longer than
 * ApiOptions:QueryTimeoutSeconds. A session still there after `seconds` (a server that does
 * not read this config file, a psql left open) fails the move: its writes would be lost.
 */
async function waitForNoSessions(name: string, url: string, seconds: number, progress?: ProgressReport): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const deadline = Date.now() + seconds * 1000
    let reported = false
    for (;;) {
      const { rows } = await client.query<{ sessions: number; who: string | null }>(
        `select count(*)::int as sessions,
                string_agg(distinct coalesce(nullif(application_name, ''), 'a client') || coalesce(' from ' || host(client_addr), ''), ', ') as who
           from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      )
      const { sessions, who } = rows[0]
      if (sessions === 0) return
      if (Date.now() >= deadline) {
        throw new TenantAdminError(
          `Tenant '${name}' was not moved: ${sessions} other session${sessions === 1 ? '' : 's'} (${who}) still use${sessions === 1 ? 's' : ''} its database ${withoutPassword(url)} ${seconds} s after it was taken out of service, and writes through ${sessions === 1 ? 'it' : 'them'} would be lost. End ${sessions === 1 ? 'it' : 'them'} (a server that does not read this config file, an open psql) and run the move again; the tenant stays where it was.`,
        )
      }
      if (!reported) progress?.(`waiting for ${sessions} session${sessions === 1 ? '' : 's'} on the tenant's database to end (${who}; at most ${seconds} s)`)
      reported = true
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    await client.end()
  }
}

/** Schema by the plugins, then the rows, then the key checked against the restored canary. */
async function restoreInto(url: string, name: string, model: Model, key: string, header: BackupHeader, lines: AsyncIterator<Buffer>, progress?: ProgressReport): Promise<TableSummary[]> {
  progress?.('creating the schema')
  await migrateDatabase(name, url, model, false)
  const tables = await restoreRows(url, header, lines, progress)
  await verifyEncryptionKey(name, url, key)
  return tables
}

function checkKey(header: BackupHeader, key: string): void {
  if (header.keyFingerprint !== keyFingerprint(key)) {
    throw new TenantAdminError(`The key file does not hold the key this backup's data is encrypted with (the backup's key is ${header.keyFingerprint}, the file's ${keyFingerprint(key)}): give the key file written beside the backup with --encryption-key-file.`)
  }
}

async function recordTenant(path: string, name: string, entry: Record<string, unknown>): Promise<void> {
  const file = readConfigFile(path)
  file.Tenants = { ...(file.Tenants ?? {}), [name]: entry }
  await writeConfigFile(path, file)
}

/**
 * A read error of the file said with its path; a file that is not gzip is not a backup, and
 * one that stops being gzip after its header is a damaged or truncated backup.
 */
function readError(error: unknown, file: string, headerRead: boolean): unknown {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOENT' || code === 'EACCES') return new TenantAdminError(`Cannot read the backup ${file}: ${(error as Error).message}`)
  if ((code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') && headerRead) {
    return new BackupError(`The backup ${file} is damaged or incomplete (${(error as Error).message}): nothing was restored.`)
  }
  if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') return new BackupError(`${file} is not an entityctl tenant backup, or it is damaged (${(error as Error).message}).`)
  return error
}

