// The admin CLI for tenants, users and migrations, run as the real binary (bin/entityctl)
// against the test PostgreSQL: exit codes, --json output, one-line errors; plugin errors
// and the refusal of a migration that would lose data.

import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { DEMO_PLUGINS, TEST_DATABASE_URL } from '../support/test-server.ts'
import { databaseUrl, dropDatabase } from '../../server/tenancy/database-server.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'entityctl-cli-'))
const plugins = join(dir, 'plugins')
const configPath = join(dir, 'entityctl.json')
const tenant = `cli-${randomBytes(3).toString('hex')}`
const database = `entityctl_${tenant.replaceAll('-', '_')}`

// Every test spawns the CLI several times: on a busy machine each run takes seconds, more than
// the default 30 s per test. A run that outlives SLOW is killed, so none is left behind.
const SLOW = 120_000

function entityctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(root, 'bin/entityctl'), ['--config', configPath, ...args], { env: { ...process.env, CI: '1' }, timeout: SLOW }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

beforeAll(() => {
  // The suite's copy of the demo: the tests add files to it, and the user's plugins/ stays out of it.
  cpSync(DEMO_PLUGINS, plugins, { recursive: true })
  writeFileSync(
    configPath,
    JSON.stringify({ Server: { PluginsDir: plugins, LogLevel: 'silent' }, Database: { ConnectionString: TEST_DATABASE_URL }, JWT: { SigningKey: randomBytes(32).toString('base64url') } }),
  )
})
afterAll(async () => {
  await dropDatabase(TEST_DATABASE_URL, database)
  rmSync(dir, { recursive: true, force: true })
})

describe('tenants and users', { timeout: SLOW }, () => {
  it('adds a tenant, creating its database and recording it', async () => {
    const added = await entityctl('tenant', 'add', tenant, '--json')
    expect(added.code, added.stderr).toBe(0)
    expect(JSON.parse(added.stdout)).toMatchObject({ tenant, database, created: true })
    const listed = await entityctl('tenant', 'list', '--json')
    expect(JSON.parse(listed.stdout)).toEqual([{ name: tenant, database, state: 'enabled' }])
  })

  it('refuses a second tenant of the same name and a bad name, with one line and a non-zero code', async () => {
    const again = await entityctl('tenant', 'add', tenant)
    expect(again.code).not.toBe(0)
    // Progress lines come first; the reason is the last line.
    expect(again.stderr.trim().split('\n').at(-1)).toBe(`entityctl: Tenant '${tenant}' already exists.`)
    const bad = await entityctl('tenant', 'add', 'Bad Name')
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain('is not a valid tenant name')
  })

  it('adds and lists users; refuses a weak password and an unknown tenant', async () => {
    const added = await entityctl('user', 'add', '--tenant', tenant, '--username', 'ada', '--password', 'correct-horse', '--full-access', '--json')
    expect(added.code, added.stderr).toBe(0)
    expect(JSON.parse(added.stdout)).toMatchObject({ username: 'ada', hasFullAccess: true })
    const listed = await entityctl('user', 'list', '--tenant', tenant, '--json')
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ username: 'ada', hasFullAccess: true, roles: [] })])
    const weak = await entityctl('user', 'add', '--tenant', tenant, '--username', 'bob', '--password', 'short')
    expect(weak.code).not.toBe(0)
    expect(weak.stderr).toContain('at least 8 characters')
    const unknown = await entityctl('user', 'list', '--tenant', 'nowhere')
    expect(unknown.stderr).toContain(`No tenant 'nowhere'. Known tenants: ${tenant}`)
  })

  it('says what is missing when a required option is absent without a terminal', async () => {
    const result = await entityctl('user', 'add', '--tenant', tenant)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('Missing --username')
  })

  it('sets a password', async () => {
    const result = await entityctl('user', 'set-password', '--tenant', tenant, '--username', 'ada', '--password', 'battery-staple')
    expect(result.code, result.stderr).toBe(0)
  })
})

describe('plugins and migrations', { timeout: SLOW }, () => {
  it('stops on a broken plugin, naming the file, line, column, entity and property', async () => {
    writeFileSync(join(plugins, 'broken.ts'), `import { entity, p, plugin } from 'entityctl/plugin'
export default plugin({ entities: [entity('Shelf', { properties: { Item: p.reference('Prodcut') } })] })
`)
    const result = await entityctl('migrate', '--tenant', tenant)
    rmSync(join(plugins, 'broken.ts'))
    expect(result.code).not.toBe(0)
    // With the position of the declaration, found by its names.
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("broken.ts:2:68: Shelf.Item: references unknown entity 'Prodcut'")
  })

  it('applies an additive change, and refuses a destructive one saying what would be lost', async () => {
    writeFileSync(join(plugins, 'extra.ts'), `import { entity, p, plugin } from 'entityctl/plugin'
export default plugin({ entities: [entity('Note', { properties: { Text: p.text(), Stars: p.integer() } })] })
`)
    const added = await entityctl('migrate', '--tenant', tenant, '--json')
    expect(added.code, added.stderr).toBe(0)
    const client = new pg.Client({ connectionString: databaseUrl(TEST_DATABASE_URL, database) })
    await client.connect()
    await client.query(`insert into "Note" ("Guid", "Text", "Stars") values (gen_random_uuid(), 'keep me', 5)`)
    await client.end()

    writeFileSync(join(plugins, 'extra.ts'), `import { entity, p, plugin } from 'entityctl/plugin'
export default plugin({ entities: [entity('Note', { properties: { Text: p.text() } })] })
`)
    const refused = await entityctl('migrate', '--tenant', tenant)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('column "Note"."Stars" with 1 values would be dropped')
    expect(refused.stderr).toContain('--allow-data-loss')

    rmSync(join(plugins, 'extra.ts'))
    const dropped = await entityctl('migrate', '--tenant', tenant)
    expect(dropped.stderr).toContain('table "Note" (no plugin declares it any more) with 1 rows would be dropped')
    const forced = await entityctl('migrate', '--tenant', tenant, '--allow-data-loss')
    expect(forced.code, forced.stderr).toBe(0)
  })

  it('migrates a database the admin created, whose default collation is not C, once', async () => {
    const own = `${database}_own`
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await admin.connect()
    // Any libc locale of the server other than C (C.UTF-8 on Debian): the schema diff compared
    // column collations with the database default.
    const { rows } = await admin.query(`select collcollate from pg_collation
      where collprovider = 'c' and collcollate not in ('C', 'POSIX') and collencoding in (-1, 6) order by collcollate = 'C.UTF-8' desc limit 1`)
    const locale = rows[0]?.collcollate ?? 'C'
    await admin.query(`create database "${own}" template template0 encoding 'UTF8' lc_collate '${locale}' lc_ctype '${locale}'`)
    await admin.end()
    const ownConfig = join(dir, 'own.json')
    writeFileSync(
      ownConfig,
      JSON.stringify({
        Server: { PluginsDir: plugins, LogLevel: 'silent' },
        Database: { ConnectionString: TEST_DATABASE_URL },
        JWT: { SigningKey: randomBytes(32).toString('base64url') },
        Tenants: { own: { Database: own, EncryptionKey: randomBytes(32).toString('base64') } },
      }),
    )
    try {
      const migrate = () => entityctl('--config', ownConfig, 'migrate', '--json')
      const first = await migrate()
      expect(first.code, first.stderr).toBe(0)
      // Text columns carry collation C; the database's default must not make them look changed.
      const second = await migrate()
      expect(second.code, second.stderr).toBe(0)
      expect(JSON.parse(second.stdout)).toEqual([expect.objectContaining({ tenant: 'own', statements: 0 })])
    } finally {
      await dropDatabase(TEST_DATABASE_URL, own)
    }
  })

  it('removes a tenant only when confirmed', async () => {
    const refused = await entityctl('tenant', 'remove', tenant)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('Pass --yes')
    const removed = await entityctl('tenant', 'remove', tenant, '--yes', '--json')
    expect(removed.code, removed.stderr).toBe(0)
    expect(JSON.parse((await entityctl('tenant', 'list', '--json')).stdout)).toEqual([])
  })
})
