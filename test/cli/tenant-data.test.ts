// A tenant's data and keys through the real CLI (bin/entityctl): backup and restore (every
// table identical, encrypted properties readable over HTTP), a backup during concurrent
// writes (restores to a consistent state), keys exported and reattached, rotate-key, move.
// A test server holds the source tenant; restored tenants are served by a second server
// process started on the same config afterwards. Every database made here is dropped.

import { execFile, spawn, spawnSync } from 'node:child_process'
import { cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { gunzipSync, gzipSync } from 'node:zlib'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminSql, call, DEMO_PLUGINS, startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'
import { loadConfig, readConfigFile, writeConfigFile } from '../../server/config/load-config.ts'
import { databaseExists, databaseUrl, dropDatabase } from '../../server/tenancy/database-server.ts'
import { propertyCipher } from '../../server/tenancy/property-encryption.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'entityctl-tenant-data-'))
const plugins = join(dir, 'plugins')
// Spawned commands start Node and PostgreSQL connections: seconds each on a busy machine. A
// command that outlives this is killed, so none is left behind.
const SLOW = 180_000
const suffix = randomBytes(3).toString('hex')
const restored = `restored-${suffix}`
const during = `during-${suffix}`
const movedDatabase = `entityctl_moved_${suffix}`
const loadedDatabase = `entityctl_move_loaded_${suffix}`

let server: TestServer
let source: string
let token: string
let second: ServeProcess | undefined

function entityctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json(): any }> {
  return new Promise((resolve) => {
    execFile(join(root, 'bin/entityctl'), ['--config', server.configPath, ...args], { env: { ...process.env, CI: '1' }, timeout: SLOW }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json: () => JSON.parse(stdout) }),
    )
  })
}

async function ok(...args: string[]) {
  const result = await entityctl(...args, '--json')
  expect(result.code, `${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(0)
  return result.json()
}

const tenantUrl = (tenant: string) => {
  const settings = loadConfig(server.configPath, {}).Tenants.get(tenant)!
  return settings.ConnectionString || databaseUrl(TEST_DATABASE_URL, settings.Database)
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** Every table of the tenant's database, each as its rows in a fixed order (JSON text). */
function everyTable(url: string): Promise<Record<string, string>> {
  return withClient(url, async (client) => {
    const tables = await client.query<{ tablename: string }>(`select tablename from pg_tables where schemaname = 'public' order by tablename`)
    const result: Record<string, string> = {}
    for (const { tablename } of tables.rows) {
      const { rows } = await client.query(`select coalesce(json_agg(t order by t::text), '[]')::text as rows from "${tablename}" t`)
      result[tablename] = rows[0].rows
    }
    return result
  })
}

async function post(path: string, body: unknown, bearer = token, api = server.api) {
  const response = await call(`${api}/${path}`, { method: 'POST', token: bearer, body })
  expect(response.status, `${path}: ${response.text}`).toBe(200)
  return response.body
}

beforeAll(async () => {
  // The demo and a model with encrypted properties.
  cpSync(DEMO_PLUGINS, plugins, { recursive: true })
  cpSync(fileURLToPath(new URL('../tenancy/plugins/patients.ts', import.meta.url)), join(plugins, 'patients.ts'))
  server = await startTestServer({ pluginsDir: plugins })
  source = server.tenants[0]
  token = await server.token()
  const customers = []
  for (const name of ['Ada Lovelace', 'Grace Hopper', 'Émilie du Châtelet']) customers.push(await post('Customers', { Name: name, Country: 'gb', CreditLimit: 1000.5 }))
  const products = []
  for (const [code, price] of [['tea-1', 4.5], ['cake-2', 12.25]] as const) products.push(await post('Products', { Code: code, Name: `Product ${code}`, Price: price }))
  for (let number = 1; number <= 6; number++) {
    await post('Orders', {
      Number: number,
      'Customer@odata.bind': `Customers(${customers[number % 3].Guid})`,
      Lines: [
        { 'Product@odata.bind': `Products(${products[0].Guid})`, Quantity: number % 4 + 1 },
        { 'Product@odata.bind': `Products(${products[1].Guid})`, Quantity: 2 },
      ],
    })
  }
  await post('Patients', { Name: 'Jane Roe', Diagnosis: 'Sprained ankle', BirthDate: '1990-05-17', Visits: 3 })
  await post('Patients', { Name: 'John Doe', Diagnosis: 'Line one\nline "two"\ttab \\ backslash', Visits: 1 })
}, SLOW)

afterAll(async () => {
  await second?.stop()
  await server?.stop()
  for (const database of [restored, during, `interrupted-${suffix}`, `cut0-${suffix}`, `cut1-${suffix}`].map((t) => `entityctl_${t.replaceAll('-', '_')}`).concat(movedDatabase, loadedDatabase)) await dropDatabase(TEST_DATABASE_URL, database)
  rmSync(dir, { recursive: true, force: true })
})

describe('backup and restore', { timeout: SLOW }, () => {
  it('restores a backup as a new tenant with every table identical, checked by the CLI too', async () => {
    const file = join(dir, 'source.entityctl-backup')
    const backup = await ok('tenant', 'backup', source, '--out', file)
    expect(backup).toMatchObject({ tenant: source, file, keyFile: `${file}.key` })
    expect(backup.tables.find((t: { table: string }) => t.table === 'OrderLine').rows).toBe(12)
    // The key beside the backup, readable by its owner only; never inside the backup.
    expect(statSync(`${file}.key`).mode & 0o777).toBe(0o600)
    const key = loadConfig(server.configPath, {}).Tenants.get(source)!.EncryptionKey
    expect(readFileSync(`${file}.key`, 'utf8')).toBe(`${key}\n`)
    expect(readFileSync(file).includes(Buffer.from(key))).toBe(false)

    const result = await ok('tenant', 'restore', file, '--as', restored)
    expect(result).toMatchObject({ tenant: restored, from: source, rows: backup.rows })
    const tables = await everyTable(tenantUrl(restored))
    expect(tables).toEqual(await everyTable(tenantUrl(source)))
    // The ETag key among them: the restored rows' ETags are hashed with the source's secret.
    expect(JSON.parse(tables._EntityTagKey)).toHaveLength(1)
  })

  it('refuses a restore with another key, or over an existing tenant, and a file that is no backup', async () => {
    const file = join(dir, 'source.entityctl-backup')
    const wrongKey = join(dir, 'wrong.key')
    writeFileSync(wrongKey, `${randomBytes(32).toString('base64')}\n`)
    const wrong = await entityctl('tenant', 'restore', file, '--as', `wrong-${suffix}`, '--encryption-key-file', wrongKey)
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('does not hold the key this backup')
    const existing = await entityctl('tenant', 'restore', file, '--as', restored)
    expect([existing.code, existing.stderr]).toEqual([1, expect.stringContaining(`Tenant '${restored}' already exists`)])
    // `restored-…` and `restored_…` share a database name: the message names the tenant that holds it.
    const twin = await entityctl('tenant', 'restore', file, '--as', restored.replaceAll('-', '_'))
    expect([twin.code, twin.stderr]).toEqual([1, expect.stringContaining(`holds data of tenant '${restored}', which uses it: a tenant needs a database of its own. Choose another name (- and _ give the same database name).`)])
    const notBackup = await entityctl('tenant', 'restore', server.configPath, '--as', `wrong-${suffix}`, '--encryption-key-file', `${file}.key`)
    expect([notBackup.code, notBackup.stderr]).toEqual([1, expect.stringContaining('is not an entityctl tenant backup')])
    const missing = await entityctl('tenant', 'restore', join(dir, 'nowhere.entityctl-backup'), '--as', `wrong-${suffix}`, '--encryption-key-file', `${file}.key`)
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining(`Cannot read the backup ${join(dir, 'nowhere.entityctl-backup')}`)])
    // Without --encryption-key-file the key is looked for beside the backup: the missing backup is what to report, not its key.
    const missingWithItsKey = await entityctl('tenant', 'restore', join(dir, 'nowhere.entityctl-backup'), '--as', `wrong-${suffix}`)
    expect([missingWithItsKey.code, missingWithItsKey.stderr]).toEqual([1, expect.stringContaining(`Cannot read the backup ${join(dir, 'nowhere.entityctl-backup')}`)])
    expect(loadConfig(server.configPath, {}).Tenants.has(`wrong-${suffix}`)).toBe(false)
  })

  it('refuses a folder or a missing folder as the backup file before it writes anything, its key included', async () => {
    const folder = join(dir, 'backups')
    mkdirSync(folder)
    const intoFolder = await entityctl('tenant', 'backup', source, '--out', folder, '--json')
    expect([intoFolder.code, intoFolder.json().error.message]).toEqual([1, `${folder} is a folder: name the backup file in it (e.g. ${join(folder, `${source}.entityctl-backup`)}).`])
    // It used to write the tenant's key beside the folder, then fail on the rename.
    expect(existsSync(`${folder}.key`)).toBe(false)
    const nowhere = join(dir, 'no-such-folder', 'x.entityctl-backup')
    const missing = await entityctl('tenant', 'backup', source, '--out', nowhere, '--json')
    expect([missing.code, missing.json().error.message]).toEqual([1, `Cannot write the backup ${nowhere}: the folder ${join(dir, 'no-such-folder')} does not exist.`])
  })

  it('leaves neither the backup nor the key it wrote when it fails part-way, and keeps a key that was there', async () => {
    // A table locked by another session past lock_timeout stops the backup after it wrote some tables.
    const url = tenantUrl(source)
    const database = new URL(url).pathname.slice(1)
    const file = join(dir, 'locked.entityctl-backup')
    await adminSql(`alter database "${database}" set lock_timeout = '100ms'`)
    try {
      await withClient(url, async (client) => {
        await client.query('begin')
        await client.query('lock table "Product" in access exclusive mode')
        const failed = await entityctl('tenant', 'backup', source, '--out', file, '--json')
        expect([failed.code, failed.json().error.message]).toEqual([1, expect.stringContaining('lock timeout')])
        expect(readdirSync(dir).filter((name) => name.startsWith('locked'))).toEqual([])
        // The key of an earlier backup at that path is not this run's to remove.
        const key = loadConfig(server.configPath, {}).Tenants.get(source)!.EncryptionKey
        writeFileSync(`${file}.key`, `${key}\n`, { mode: 0o600 })
        expect((await entityctl('tenant', 'backup', source, '--out', file, '--json')).code).toBe(1)
        expect(readdirSync(dir).filter((name) => name.startsWith('locked'))).toEqual(['locked.entityctl-backup.key'])
        await client.query('rollback')
      })
    } finally {
      await adminSql(`alter database "${database}" reset lock_timeout`)
    }
  })

  it('refuses a truncated backup, ending and leaving no database or config entry behind', async () => {
    const file = join(dir, 'source.entityctl-backup')
    const whole = readFileSync(file)
    const cuts = [200, Math.floor(whole.length / 2)]
    const names = cuts.map((_, i) => `cut${i}-${suffix}`)
    const results = await Promise.all(
      cuts.map((cut, i) => {
        const truncated = join(dir, `cut-${cut}.entityctl-backup`)
        writeFileSync(truncated, whole.subarray(0, whole.length - cut))
        // It used to wait for ever for the rest of a COPY: a minute is far more than it takes.
        return new Promise<{ code: number | null; stderr: string }>((resolve) => {
          execFile(join(root, 'bin/entityctl'), ['--config', server.configPath, 'tenant', 'restore', truncated, '--as', names[i], '--encryption-key-file', `${file}.key`], { env: { ...process.env, CI: '1' }, timeout: 60_000, killSignal: 'SIGKILL' }, (error, _stdout, stderr) =>
            resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
          )
        })
      }),
    )
    for (const [i, result] of results.entries()) {
      expect([result.code, result.stderr.trim().split('\n').at(-1)]).toEqual([1, expect.stringContaining('is damaged or incomplete')])
      expect(await databaseExists(TEST_DATABASE_URL, `entityctl_${names[i].replaceAll('-', '_')}`)).toBe(false)
      expect(loadConfig(server.configPath, {}).Tenants.has(names[i])).toBe(false)
    }
  })

  it('drops the database of a restore interrupted with Ctrl-C', async () => {
    // The backup comes through a pipe that stops after the first table's rows, as a slow disk
    // would: the restore waits inside a COPY when Ctrl-C comes.
    const text = gunzipSync(readFileSync(join(dir, 'source.entityctl-backup'))).toString('utf8').split('\n')
    const firstTable = text.indexOf('\\.') + 2
    const pipe = join(dir, 'slow.entityctl-backup')
    expect(spawnSync('mkfifo', [pipe]).status).toBe(0)
    const name = `interrupted-${suffix}`
    const child = spawn(join(root, 'bin/entityctl'), ['--config', server.configPath, 'tenant', 'restore', pipe, '--as', name, '--encryption-key-file', join(dir, 'source.entityctl-backup.key')], {
      env: { ...process.env, CI: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: SLOW,
    })
    const writer = createWriteStream(pipe)
    writer.write(gzipSync(`${text.slice(0, firstTable).join('\n')}\n`))
    let stderr = ''
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (chunk) => {
        stderr += chunk
        // The second table's COPY has begun.
        if ((stderr.match(/restoring /g) ?? []).length >= 2) resolve()
      })
    })
    const database = `entityctl_${name.replaceAll('-', '_')}`
    expect(await databaseExists(TEST_DATABASE_URL, database)).toBe(true)
    child.kill('SIGINT')
    // Node cannot exit while a read of the pipe waits: the pipe is closed a second after Ctrl-C
    // is heard, by when the command has decided what to leave behind.
    await until(() => stderr.includes('interrupted'))
    setTimeout(() => writer.destroy(), 1000)
    expect(await exited, stderr).toBe(130)
    expect(await databaseExists(TEST_DATABASE_URL, database)).toBe(false)
    expect(loadConfig(server.configPath, {}).Tenants.has(name)).toBe(false)
  })

  it('takes a backup during concurrent writes that restores to a consistent state', async () => {
    const [customer] = (await call(`${server.api}/Customers?$top=1`, { token })).body.value
    const [product] = (await call(`${server.api}/Products?$top=1`, { token })).body.value
    let writing = true
    let written = 0
    let duringBackup = 0
    let backingUp = false
    // Orders with lines, and lines added to them: every write changes an order's total.
    const writer = (async () => {
      for (let number = 1000; writing; number++) {
        const order = await post('Orders', { Number: number, 'Customer@odata.bind': `Customers(${customer.Guid})`, Lines: [{ 'Product@odata.bind': `Products(${product.Guid})`, Quantity: 1 }] })
        await post('OrderLines', { 'Order@odata.bind': `Orders(${order.Guid})`, 'Product@odata.bind': `Products(${product.Guid})`, Quantity: 3 })
        written++
        if (backingUp) duringBackup++
      }
    })()
    // The backup starts once writes are flowing.
    while (written < 3) await new Promise((resolve) => setImmediate(resolve))
    backingUp = true
    const file = join(dir, 'during.entityctl-backup')
    const backup = await entityctl('tenant', 'backup', source, '--out', file, '--json')
    backingUp = false
    writing = false
    await writer
    expect(backup.code, backup.stderr).toBe(0)
    expect(duringBackup, 'writes completed while the backup ran').toBeGreaterThan(0)
    expect(await ok('tenant', 'restore', file, '--as', during)).toMatchObject({ tenant: during })
    const totals = await withClient(tenantUrl(during), async (client) => {
      const { rows } = await client.query(`select o."Number", o."Total"::text as total, coalesce(sum(l."LineTotal"), 0)::text as lines, count(l.*)::int as count
          from "Order" o left join "OrderLine" l on l."Order_Guid" = o."Guid" group by o."Guid" order by o."Number"`)
      return rows
    })
    expect(totals.length).toBeGreaterThan(6)
    for (const row of totals) expect(row.total, `order ${row.Number}`).toBe(row.lines)
  })
})

describe('keys', { timeout: SLOW }, () => {
  it('refuses to remove a tenant keeping its database unless the key is exported, and reattaches it with the key file', async () => {
    const refused = await entityctl('tenant', 'remove', during, '--yes', '--keep-database')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('--export-key FILE')
    expect(loadConfig(server.configPath, {}).Tenants.has(during)).toBe(true)

    // A folder is no key file: said so, not 'holds another key'; the tenant stays.
    const intoFolder = await entityctl('tenant', 'remove', during, '--yes', '--keep-database', '--export-key', dir, '--json')
    expect([intoFolder.code, intoFolder.json().error.message]).toEqual([1, `${dir} is a folder: name the key file in it (e.g. ${join(dir, 'tenant.key')}).`])
    expect(loadConfig(server.configPath, {}).Tenants.has(during)).toBe(true)

    const keyFile = join(dir, 'during.key')
    const key = loadConfig(server.configPath, {}).Tenants.get(during)!.EncryptionKey
    expect(await ok('tenant', 'remove', during, '--yes', '--keep-database', '--export-key', keyFile)).toEqual({ tenant: during, removed: true, databaseKept: true, keyFile })
    expect(readFileSync(keyFile, 'utf8')).toBe(`${key}\n`)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)

    // A new key would not open the kept data: refused, saying how to give the key.
    const withoutKey = await entityctl('tenant', 'add', during)
    expect(withoutKey.code).toBe(1)
    expect(withoutKey.stderr).toContain('--encryption-key-file')
    expect(await ok('tenant', 'add', during, '--encryption-key-file', keyFile)).toMatchObject({ tenant: during, created: false })
    expect(loadConfig(server.configPath, {}).Tenants.get(during)!.EncryptionKey).toBe(key)
    // An export never overwrites a file holding another key (restored tenants share their source's key).
    const other = await entityctl('tenant', 'remove', restored, '--yes', '--keep-database', '--export-key', join(dir, 'wrong.key'))
    expect([other.code, other.stderr]).toEqual([1, expect.stringContaining('holds another key')])
    expect(loadConfig(server.configPath, {}).Tenants.has(restored)).toBe(true)
  })

  it('rotates a key: every encrypted value and the canary re-encrypted under the new key', async () => {
    const before = loadConfig(server.configPath, {}).Tenants.get(restored)!.EncryptionKey
    const stored = () => withClient(tenantUrl(restored), async (client) => (await client.query(`select "Guid", "Diagnosis", "Visits" from "Patient" order by "Guid"`)).rows)
    const old = await stored()
    const report = await ok('tenant', 'rotate-key', restored)
    expect(report).toMatchObject({ tenant: restored, rows: 2, values: 5 })
    const settings = loadConfig(server.configPath, {}).Tenants.get(restored)!
    expect(settings.EncryptionKey).not.toBe(before)
    expect(settings.PreviousEncryptionKey).toBeUndefined()
    const now = propertyCipher(restored, settings.EncryptionKey)
    const then = propertyCipher(restored, before)
    const rotated = await stored()
    for (const [i, row] of rotated.entries()) {
      expect(row.Diagnosis).not.toBe(old[i].Diagnosis)
      expect(now.decrypt(row.Diagnosis)).toBe(then.decrypt(old[i].Diagnosis))
      expect(() => then.decrypt(row.Diagnosis)).toThrow()
    }
    const canary = await withClient(tenantUrl(restored), async (client) => (await client.query(`select "Canary" from "_EncryptionCheck"`)).rows[0].Canary)
    expect(now.decrypt(canary)).toBe('entityctl')
    expect(() => then.decrypt(canary)).toThrow()
  })
})

describe('served after restore, reattach and rotation', { timeout: SLOW }, () => {
  it('reads every entity set of the restored tenant as the source serves it, encrypted properties included', async () => {
    second = await serveProcess(server.configPath, { Server__LogLevel: 'info' })
    const signIn = async (tenant: string) => {
      const response = await call(`${second!.api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: 'admin', Password: 'admin-password-1' } })
      expect(response.status, response.text).toBe(200)
      return response.body.accessToken as string
    }
    const restoredToken = await signIn(restored)
    // The same rows, each at the same version; their ETags are new (the restore wrote the rows
    // again, so their xmin changed, the key it is hashed with the same): an If-Match from
    // before the restore is 412, never a match.
    const versionOnly = (rows: Record<string, unknown>[]) => rows.map((row) => ({ ...row, '@odata.etag': String(row['@odata.etag']).replace(/\.[0-9a-f]+"$/, '"') }))
    for (const set of ['Customers', 'Products', 'Patients']) {
      const original = await call(`${server.api}/${set}?$orderby=Guid`, { token })
      const copy = await call(`${second.api}/${set}?$orderby=Guid`, { token: restoredToken })
      expect(copy.status).toBe(200)
      expect(versionOnly(copy.body.value)).toEqual(versionOnly(original.body.value))
      const etags = new Set(original.body.value.map((row: Record<string, unknown>) => row['@odata.etag']))
      expect(copy.body.value.filter((row: Record<string, unknown>) => etags.has(row['@odata.etag']))).toEqual([])
    }
    const patients = (await call(`${second.api}/Patients?$orderby=Name&$select=Name,Diagnosis,BirthDate,Visits`, { token: restoredToken })).body.value
    expect(patients.map((p: Record<string, unknown>) => [p.Name, p.Diagnosis, p.BirthDate, p.Visits])).toEqual([
      ['Jane Roe', 'Sprained ankle', '1990-05-17', 3],
      ['John Doe', 'Line one\nline "two"\ttab \\ backslash', null, 1],
    ])
    // The reattached tenant: its data and its encrypted properties.
    const duringToken = await signIn(during)
    expect((await call(`${second.api}/Patients?$select=Diagnosis&$orderby=Name`, { token: duringToken })).body.value.map((p: { Diagnosis: string }) => p.Diagnosis)[0]).toBe('Sprained ankle')
    await second.stop()
    second = undefined
  })
})

describe('move', { timeout: SLOW }, () => {
  it('moves a tenant to another database, every table checked, and points its config there', async () => {
    const previous = tenantUrl(restored)
    const before = await everyTable(previous)
    const target = databaseUrl(TEST_DATABASE_URL, movedDatabase)
    const result = await ok('tenant', 'move', restored, '--to', target)
    expect(result).toMatchObject({ tenant: restored, to: target })
    const settings = loadConfig(server.configPath, {}).Tenants.get(restored)!
    expect(settings.ConnectionString).toBe(target)
    expect(await everyTable(target)).toEqual(before)
    // The old database is kept; a second move to a database holding tables is refused.
    const again = await entityctl('tenant', 'move', during, '--to', target)
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining('already holds tables')])
    expect(await everyTable(previous)).toEqual(before)
    // A tenant with a connection string of its own keeps its database on removal: its key must be kept too.
    const remove = await entityctl('tenant', 'remove', restored, '--yes')
    expect([remove.code, remove.stderr]).toEqual([2, expect.stringContaining('has its own ConnectionString')])
  })

  it('drops the database it made when Ctrl-C interrupts it, and leaves the tenant served where it was', async () => {
    const previous = tenantUrl(during)
    const database = `entityctl_move_interrupted_${suffix}`
    const target = databaseUrl(TEST_DATABASE_URL, database)
    const bearer = await server.token(during)
    // A session left open on the source (a psql) holds the move, the tenant out of service, when Ctrl-C comes.
    await withClient(previous, async () => {
      const child = spawn(join(root, 'bin/entityctl'), ['--config', server.configPath, 'tenant', 'move', during, '--to', target], {
        env: { ...process.env, CI: '1' },
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: SLOW,
      })
      let stderr = ''
      child.stderr.on('data', (chunk) => (stderr += chunk))
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      await until(() => stderr.includes('waiting for 1 session'))
      expect(await databaseExists(TEST_DATABASE_URL, database)).toBe(true)
      expect(await ok('tenant', 'list')).toContainEqual({ name: during, database: expect.any(String), state: 'moving' })
      const second = await entityctl('tenant', 'move', during, '--to', `${target}_2`)
      expect([second.code, second.stderr]).toEqual([1, expect.stringContaining(`Tenant '${during}' is being moved already`)])
      const refused = await call(`${server.api}/Customers`, { token: bearer })
      expect([refused.status, refused.headers.get('retry-after'), refused.body?.error?.message]).toEqual([503, '10', expect.stringContaining('is being moved')])
      child.kill('SIGINT')
      expect(await exited, stderr).toBe(130)
    })
    try {
      expect(await databaseExists(TEST_DATABASE_URL, database)).toBe(false)
      expect(tenantUrl(during)).toBe(previous)
      expect(loadConfig(server.configPath, {}).Tenants.get(during)!.Moving).toBeUndefined()
      expect((await call(`${server.api}/Customers`, { token: bearer })).status).toBe(200)
    } finally {
      await dropDatabase(TEST_DATABASE_URL, database)
    }
  })

  it('fails, the tenant back in service where it was, when a session on its database does not end', async () => {
    const previous = tenantUrl(during)
    const database = `entityctl_move_held_${suffix}`
    const target = databaseUrl(TEST_DATABASE_URL, database)
    const bearer = await server.token(during)
    // The wait is ApiOptions:QueryTimeoutSeconds and a grace of 5 s: 6 s here.
    const failed = await withClient(previous, () =>
      new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(join(root, 'bin/entityctl'), ['--config', server.configPath, 'tenant', 'move', during, '--to', target, '--json'], {
          env: { ...process.env, CI: '1', ApiOptions__QueryTimeoutSeconds: '1' },
          timeout: SLOW,
        }, (error, stdout) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }))
      }),
    )
    try {
      expect(failed.code).toBe(1)
      expect(JSON.parse(failed.stdout).error.message).toMatch(
        new RegExp(`^Tenant '${during}' was not moved: 1 other session \\(a client from 127\\.0\\.0\\.1\\) still uses its database .* 6 s after it was taken out of service`),
      )
      expect(await databaseExists(TEST_DATABASE_URL, database)).toBe(false)
      expect(tenantUrl(during)).toBe(previous)
      expect(loadConfig(server.configPath, {}).Tenants.get(during)!.Moving).toBeUndefined()
      expect((await call(`${server.api}/Customers`, { token: bearer })).status).toBe(200)
    } finally {
      await dropDatabase(TEST_DATABASE_URL, database)
    }
  })

  it('moves a tenant under write load: every write acknowledged is in the new database, the others are 503, and it serves from there after', async () => {
    const target = databaseUrl(TEST_DATABASE_URL, loadedDatabase)
    const bearer = await server.token(during)
    const acknowledged: string[] = []
    const refused: (string | null)[] = []
    const failed: string[] = []
    let writing = true
    const writer = async (lane: number) => {
      for (let n = 0; writing; n++) {
        const response = await call(`${server.api}/Customers`, { method: 'POST', token: bearer, body: { Name: `load ${lane}.${n}`, Country: 'gb', CreditLimit: 1 } })
        if (response.status >= 200 && response.status < 300) acknowledged.push(response.body.Guid)
        else if (response.status === 503) refused.push(response.headers.get('retry-after'))
        else failed.push(`${response.status} ${response.text}`)
      }
    }
    const writers = Promise.all([1, 2, 3].map(writer))
    try {
      await until(() => acknowledged.length >= 5)
      expect(await ok('tenant', 'move', during, '--to', target)).toMatchObject({ tenant: during, to: target })
      const moved = acknowledged.length
      await until(() => acknowledged.length >= moved + 5 || failed.length > 0)
    } finally {
      writing = false
      await writers
    }
    expect(failed).toEqual([])
    expect(tenantUrl(during)).toBe(target)
    const stored = await withClient(target, async (client) => (await client.query<{ Guid: string }>('select "Guid" from "Customer"')).rows.map((row) => row.Guid))
    expect(acknowledged.filter((guid) => !stored.includes(guid))).toEqual([])
    expect(refused.length).toBeGreaterThan(0)
    expect(new Set(refused)).toEqual(new Set(['10']))
  })

  it('says how to reattach a moved tenant removed with its database kept: by its connection string, since tenant add would take the copy left behind', async () => {
    const target = databaseUrl(TEST_DATABASE_URL, movedDatabase)
    expect(tenantUrl(restored)).toBe(target)
    const keyFile = join(dir, 'moved.key')
    const removed = await entityctl('tenant', 'remove', restored, '--yes', '--keep-database', '--export-key', keyFile)
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout).not.toContain('entityctl tenant add')
    expect(removed.stdout).toContain(`write Tenants:${restored} back in the config with its ConnectionString (${target}) and the EncryptionKey in ${keyFile}`)
    expect(removed.stdout).toContain(`\`tenant add ${restored}\` would use entityctl_${restored.replaceAll('-', '_')} instead`)
    // As it says: the tenant is back where its data is.
    const file = readConfigFile(server.configPath)
    file.Tenants[restored] = { ConnectionString: target, EncryptionKey: readFileSync(keyFile, 'utf8').trim() }
    await writeConfigFile(server.configPath, file)
    expect(await ok('tenant', 'list')).toContainEqual({ name: restored, database: '(own connection string)', state: 'enabled' })
  })
})

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50))
}

/** Runs entityctl on a pseudo-terminal (util-linux `script`): stdin and stdout are a terminal, as for an admin. */
function onTerminal(...args: string[]): Promise<{ code: number | null; text: string }> {
  const command = [join(root, 'bin/entityctl'), '--config', server.configPath, ...args].map((a) => `'${a}'`).join(' ')
  return new Promise((resolve) => {
    execFile('script', ['-qefc', command, '/dev/null'], { env: { ...process.env, CI: '' }, timeout: SLOW }, (error, stdout) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, text: stdout }),
    )
  })
}

describe.skipIf(!existsSync('/usr/bin/script'))('on a terminal', { timeout: SLOW }, () => {
  it('shows the progress of a backup on one rewritten line, cleared at the end', async () => {
    const output = await onTerminal('tenant', 'backup', during, '--out', join(dir, 'terminal.entityctl-backup'))
    expect(output.code, output.text).toBe(0)
    expect(output.text).toContain('\r\x1b[2Kbacking up OrderLine…')
    expect(output.text).toMatch(/\r\x1b\[2KTenant '.*': \d+ rows in \d+ tables backed up/)
  })

  it('prints the key of a tenant removed with --keep-database, with a warning, when no file is given', async () => {
    const key = loadConfig(server.configPath, {}).Tenants.get(restored)!.EncryptionKey
    const output = await onTerminal('tenant', 'remove', restored, '--yes', '--keep-database')
    expect(output.code, output.text).toBe(0)
    expect(output.text).toContain(`WARNING: the EncryptionKey of tenant '${restored}' is printed below`)
    expect(output.text).toContain(key)
    expect(loadConfig(server.configPath, {}).Tenants.has(restored)).toBe(false)
  })
})
