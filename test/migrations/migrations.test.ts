// Migrations with a plan, as an admin meets them: plugins change under running tenants, the
// real CLI plans and applies, real `entityctl serve` processes start on the test PostgreSQL.
// A rename keeps its data on every tenant; a change that would lose data is shown by
// `migrate --plan`, refused at start for the affected tenant only (503 with the reason, the
// others serve) and applied with `--allow-data-loss --tenant`, after which the running server
// serves it; an index made by hand survives. Then many tenants and two instances at once.

import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { recordedSchemaVersion } from '../../server/migrations/migration-journal.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { addUser } from '../../server/auth/user-admin.ts'
import { ADMIN, call, DEMO_PLUGINS, onConnection, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'
import { createManyTenants, type ManyTenants } from '../support/many-tenants.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const RENAMES = ['entity Note → Memo', 'property Memo.Mail → Memo.Email', 'property Memo.Owner → Memo.Client']
const SLOW = 180_000

function entityctl(configPath: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(root, 'bin/entityctl'), ['--config', configPath, ...args], { env: { ...process.env, CI: '1' }, timeout: SLOW }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

async function inTenant<T>(many: ManyTenants, index: number, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), many.databases[index]) })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

async function signIn(api: string, tenant: string): Promise<{ status: number; body: any; token?: string; headers: Headers }> {
  const answer = await call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password } })
  return { status: answer.status, body: answer.body, headers: answer.headers, token: answer.body?.accessToken }
}

/** A start migrates (a MikroORM schema comparison per tenant): on a loaded machine that takes more than serveProcess's default 30 s. */
const serve = (configPath: string, args: string[] = []) => serveProcess(configPath, {}, args, 150_000)

/** Polls `check` until it returns true (a running server noticing a change), at most `withinMs`. */
async function eventually(check: () => Promise<boolean>, withinMs = 60_000): Promise<void> {
  const until = Date.now() + withinMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error('the condition did not become true in time')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const withAdmin = async (tenant: string, configPath: string) => {
  const config = loadConfig(configPath, {})
  const registry = new TenantRegistry(config, await loadModel(config.Server.PluginsDir), testDatabaseUrl())
  try {
    await addUser((await registry.get(tenant))!, ADMIN.username, ADMIN.password, true)
  } finally {
    await registry.close()
  }
}

describe('migrations with a plan', { timeout: SLOW }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-migr-'))
  const plugins = join(dir, 'plugins')
  let many: ManyTenants
  let servers: ServeProcess[] = []
  const OWNER = '0193a000-0000-7000-8000-000000000001'
  const notes = (body: string) => writeFileSync(join(plugins, 'notes.ts'), `import { entity, p, plugin } from 'entityctl/plugin'\nexport default plugin({ version: '${body.length}', entities: [${body}] })\n`)

  beforeAll(async () => {
    cpSync(DEMO_PLUGINS, plugins, { recursive: true })
    notes(`entity('Note', { properties: { Text: p.text(), Stars: p.integer(), Mail: p.text(), Owner: p.reference('Customer') } })`)
    many = await createManyTenants({ count: 3, serverUrl: testDatabaseUrl(), pluginsDir: plugins, prepare: withAdmin })
    // Every tenant has notes; only the first has a Stars value (the one a later change would lose).
    for (let i = 0; i < 3; i++) {
      await inTenant(many, i, async (client) => {
        await client.query(`insert into "Customer" ("Guid", "Name", "_Version") values ($1, 'Ada', 1)`, [OWNER])
        await client.query(`insert into "Note" ("Guid", "Text", "Stars", "Mail", "Owner_Guid", "_Version") values (gen_random_uuid(), $1, $2, $3, $4, 1)`, [
          `note of ${many.tenants[i]}`,
          i === 0 ? 5 : null,
          `${many.tenants[i]}@example.com`,
          OWNER,
        ])
      })
    }
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await many?.remove()
    rmSync(dir, { recursive: true, force: true })
  })

  it('renames an entity, a property and a reference on every tenant, keeping their data; the plan showed it and the journal records it', async () => {
    notes(`entity('Memo', { renamedFrom: 'Note', properties: { Text: p.text(), Stars: p.integer(), Email: p.text().renamedFrom('Mail'), Client: p.reference('Customer').renamedFrom('Owner') } })`)
    const plan = await entityctl(many.configPath, 'migrate', '--plan', '--json')
    expect(plan.code, plan.stderr).toBe(0)
    const planned = JSON.parse(plan.stdout)
    expect(planned).toHaveLength(3)
    for (const tenant of planned) {
      expect(tenant).toMatchObject({ status: 'planned', losses: [], renames: RENAMES })
      expect(tenant.sql).toContain('alter table "Note" rename to "Memo"')
      expect(tenant.sql).toContain('alter table "Memo" rename column "Mail" to "Email"')
      expect(tenant.sql).toContain('alter table "Memo" rename column "Owner_Guid" to "Client_Guid"')
    }
    // --plan changed nothing.
    expect(await inTenant(many, 0, async (c) => (await c.query(`select to_regclass('"Note"')::text as t`)).rows[0].t)).toBe('"Note"')

    const server = await serve(many.configPath)
    servers.push(server)
    for (const tenant of many.tenants) {
      const { token } = await signIn(server.api, tenant)
      const memos = await call(`${server.api}/Memos?$select=Text,Email,ClientGuid&$expand=Client($select=Name)`, { token })
      expect(memos.status, memos.text).toBe(200)
      expect(memos.body.value).toEqual([
        expect.objectContaining({ Text: `note of ${tenant}`, Email: `${tenant}@example.com`, ClientGuid: OWNER, Client: expect.objectContaining({ Name: 'Ada' }) }),
      ])
    }
    await server.stop()
    servers = []
    // The renamed table's key, foreign key and index took the new names: nothing is left to change.
    const after = await entityctl(many.configPath, 'migrate', '--plan', '--json')
    expect(JSON.parse(after.stdout).map((tenant: { sql: string[] }) => tenant.sql)).toEqual([[], [], []])
    const journal = await inTenant(many, 1, async (c) => (await c.query(`select "Renames", "Plugins", "AppliedBy" from "_Migration" order by "Id" desc limit 1`)).rows[0])
    expect(journal.Renames).toEqual(RENAMES)
    expect(journal.Plugins).toContainEqual({ source: expect.stringContaining('notes.ts'), version: expect.any(String) })
    expect(journal.AppliedBy).toMatch(/^entityctl .* serve on /)
  })

  it('refuses a change that would lose data for that tenant only: plan first, 503 with the reason, the others serve; --allow-data-loss --tenant makes it serve', async () => {
    // A DBA's index for a report: not entityctl's, so never dropped.
    await inTenant(many, 1, async (c) => {
      await c.query(`create index "Memo_report" on "Memo" ("Text")`)
      await c.query(`alter table "Memo" add constraint "memo_text_short" check (length("Text") < 1000)`)
    })
    notes(`entity('Memo', { renamedFrom: 'Note', properties: { Text: p.text(), Email: p.text().renamedFrom('Mail'), Client: p.reference('Customer').renamedFrom('Owner'), Pinned: p.boolean() } })`)

    const plan = await entityctl(many.configPath, 'migrate', '--plan', '--json')
    expect(plan.code, plan.stderr).toBe(0)
    const [first, second, third] = JSON.parse(plan.stdout)
    expect(first.losses).toEqual(['column "Memo"."Stars" with 1 values would be dropped'])
    expect(first.sql).toContain('alter table "Memo" drop column "Stars"')
    expect(second.losses).toEqual([])
    expect(third.losses).toEqual([])
    expect(second.unmanaged).toEqual(['constraint "memo_text_short" on "Memo"', 'index "Memo_report" on "Memo"'])
    expect(second.sql.join('\n')).not.toMatch(/Memo_report|memo_text_short/)
    const readable = await entityctl(many.configPath, 'migrate', '--plan')
    expect(readable.stdout).toContain(`tenant ${many.tenants[0]}: `)
    expect(readable.stdout).toContain('WOULD LOSE DATA')
    expect(readable.stdout).toContain('unmanaged  index "Memo_report" on "Memo"')

    const server = await serve(many.configPath)
    servers.push(server)
    const refusedLine = await server.line((entry) => entry.tenant === many.tenants[0] && entry.level === 50)
    expect(refusedLine.msg).toContain(`tenant ${many.tenants[0]} unavailable: migration refused, it would lose data`)
    expect(refusedLine.losses).toEqual(['column "Memo"."Stars" with 1 values would be dropped'])

    const refused = await signIn(server.api, many.tenants[0])
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBeTruthy()
    expect(refused.body.error.code).toBe('ServiceUnavailable')
    expect(refused.body.error.message).toContain('column "Memo"."Stars" with 1 values would be dropped')
    expect(refused.body.error.message).toContain(`entityctl migrate --allow-data-loss --tenant ${many.tenants[0]}`)
    for (const tenant of many.tenants.slice(1)) {
      const { token, status } = await signIn(server.api, tenant)
      expect(status).toBe(200)
      const memos = await call(`${server.api}/Memos?$select=Text,Pinned`, { token })
      expect(memos.status, memos.text).toBe(200)
      expect(memos.body.value).toEqual([expect.objectContaining({ Text: `note of ${tenant}`, Pinned: null })])
    }
    const ready = await call(`${server.url}/readyz`)
    expect(ready.status).toBe(200)
    expect(ready.body.unavailableTenants).toEqual([many.tenants[0]])
    expect(ready.body.migrationsPending).toEqual([expect.objectContaining({ tenant: many.tenants[0], kind: 'refused' })])
    expect(await inTenant(many, 1, async (c) => (await c.query(`select count(*)::int as n from pg_indexes where indexname = 'Memo_report'`)).rows[0].n)).toBe(1)

    const applied = await entityctl(many.configPath, 'migrate', '--allow-data-loss', '--tenant', many.tenants[0], '--json')
    expect(applied.code, applied.stderr).toBe(0)
    expect(JSON.parse(applied.stdout)).toEqual([expect.objectContaining({ tenant: many.tenants[0], status: 'applied' })])
    // The running server notices on the tenant's next request.
    await eventually(async () => (await signIn(server.api, many.tenants[0])).status === 200)
    const { token } = await signIn(server.api, many.tenants[0])
    const memos = await call(`${server.api}/Memos?$select=Text,Pinned`, { token })
    expect(memos.body.value).toEqual([expect.objectContaining({ Text: `note of ${many.tenants[0]}` })])
    const loss = await inTenant(many, 0, async (c) => (await c.query(`select "DataLoss" from "_Migration" order by "Id" desc limit 1`)).rows[0])
    expect(loss.DataLoss).toEqual(['column "Memo"."Stars" with 1 values would be dropped'])
    await server.stop()
    servers = []

    // A restart and a full migrate (which compares the whole schema) leave the hand-made index.
    const again = await serve(many.configPath)
    servers.push(again)
    expect(again.lines.find((entry) => entry.msg === 'entityctl serving')).not.toHaveProperty('unavailable')
    await again.stop()
    servers = []
    const migrated = await entityctl(many.configPath, 'migrate', '--json')
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(await inTenant(many, 1, async (c) => (await c.query(`select count(*)::int as n from pg_indexes where indexname = 'Memo_report'`)).rows[0].n)).toBe(1)
    expect(await inTenant(many, 1, async (c) => (await c.query(`select count(*)::int as n from pg_constraint where conname = 'memo_text_short'`)).rows[0].n)).toBe(1)
  })

  it('serve --no-migrate does not migrate: a tenant behind answers 503 and is listed by /readyz until `entityctl migrate`', async () => {
    notes(`entity('Memo', { renamedFrom: 'Note', properties: { Text: p.text(), Email: p.text().renamedFrom('Mail'), Client: p.reference('Customer').renamedFrom('Owner'), Pinned: p.boolean(), Color: p.text() } })`)
    const server = await serve(many.configPath, ['--no-migrate'])
    servers.push(server)
    const behind = await signIn(server.api, many.tenants[2])
    expect(behind.status).toBe(503)
    expect(behind.body.error.message).toContain('serve --no-migrate')
    const ready = await call(`${server.url}/readyz`)
    expect(ready.body.unavailableTenants).toEqual([...many.tenants].sort())
    const migrated = await entityctl(many.configPath, 'migrate', '--json')
    expect(migrated.code, migrated.stderr).toBe(0)
    await eventually(async () => (await signIn(server.api, many.tenants[2])).status === 200)
    await server.stop()
    servers = []
  })

  it('blocks only the tenants where PostgreSQL refuses a statement (a new required property on a table with rows), with its message', async () => {
    await inTenant(many, 2, (c) => c.query(`delete from "Memo"`))
    notes(`entity('Memo', { renamedFrom: 'Note', properties: { Text: p.text(), Email: p.text().renamedFrom('Mail'), Client: p.reference('Customer').renamedFrom('Owner'), Pinned: p.boolean(), Color: p.text(), Due: p.date().required() } })`)
    const server = await serve(many.configPath)
    servers.push(server)
    const failed = await signIn(server.api, many.tenants[0])
    expect(failed.status).toBe(503)
    expect(failed.body.error.message).toMatch(/its schema migration failed \(.*"Due".*\)/)
    const pending = (await call(`${server.url}/readyz`)).body.migrationsPending
    expect(pending.map((entry: { tenant: string; kind: string }) => `${entry.tenant} ${entry.kind}`).sort()).toEqual([
      `${many.tenants[0]} failed`,
      `${many.tenants[1]} failed`,
    ])
    const empty = await signIn(server.api, many.tenants[2])
    expect(empty.status).toBe(200)
    expect((await call(`${server.api}/Memos?$select=Due`, { token: empty.token })).status).toBe(200)
    await server.stop()
    servers = []
  })
})

describe('renames only where the plugin declares them', { timeout: SLOW }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-migr-'))
  const plugins = join(dir, 'plugins')
  let many: ManyTenants
  const things = (body: string) => writeFileSync(join(plugins, 'things.ts'), `import { entity, p, plugin } from 'entityctl/plugin'\nexport default plugin({ version: '${body.length}', entities: [${body}] })\n`)
  const migrate = async (...args: string[]) => {
    const run = await entityctl(many.configPath, 'migrate', '--json', ...args)
    return { code: run.code, stderr: run.stderr, tenant: JSON.parse(run.stdout)[0] }
  }
  const column = (table: string, name: string) =>
    inTenant(many, 0, async (c) => (await c.query(`select ${JSON.stringify(name)} as value from ${JSON.stringify(table)}`)).rows.map((row) => row.value))

  beforeAll(async () => {
    cpSync(DEMO_PLUGINS, plugins, { recursive: true })
    things(`entity('Thing', { properties: { Score: p.integer() } }), entity('Gadget', { properties: { Size: p.integer() } })`)
    many = await createManyTenants({ count: 1, serverUrl: testDatabaseUrl(), pluginsDir: plugins })
    await inTenant(many, 0, async (client) => {
      await client.query(`insert into "Thing" ("Guid", "Score", "_Version") values (gen_random_uuid(), 7, 1)`)
      await client.query(`insert into "Gadget" ("Guid", "Size", "_Version") values (gen_random_uuid(), 3, 1)`)
    })
  })
  afterAll(async () => {
    await many?.remove()
    rmSync(dir, { recursive: true, force: true })
  })

  it('plans a removed property and an unrelated new one of the same type as a drop and an add, and refuses it while the old one holds values', async () => {
    things(`entity('Thing', { properties: { Extra: p.integer() } }), entity('Widget', { properties: { Size: p.integer() } })`)
    const plan = await migrate('--plan')
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.tenant.renames).toEqual([])
    expect(plan.tenant.sql.join('\n')).not.toMatch(/rename/)
    expect(plan.tenant.sql).toContain('alter table "Thing" drop column "Score"')
    expect(plan.tenant.sql).toContain('alter table "Thing" add "Extra" int null')
    expect(plan.tenant.sql).toContainEqual(expect.stringMatching(/^create table "Widget"/))
    expect(plan.tenant.losses).toEqual([
      'table "Gadget" (no plugin declares it any more) with 1 rows would be dropped',
      'column "Thing"."Score" with 1 values would be dropped',
    ])

    const refused = await migrate()
    expect(refused.code).toBe(1)
    expect(refused.tenant).toMatchObject({ status: 'refused' })
    expect(await column('Thing', 'Score')).toEqual([7])
  })

  it('keeps the values of a declared rename', async () => {
    things(`entity('Thing', { properties: { Extra: p.integer().renamedFrom('Score') } }), entity('Widget', { renamedFrom: 'Gadget', properties: { Size: p.integer() } })`)
    const plan = await migrate('--plan')
    expect(plan.tenant).toMatchObject({ losses: [], renames: ['property Thing.Score → Thing.Extra', 'entity Gadget → Widget'] })
    const applied = await migrate()
    expect(applied.code, applied.stderr).toBe(0)
    expect(await column('Thing', 'Extra')).toEqual([7])
    expect(await column('Widget', 'Size')).toEqual([3])
  })

  it('with --allow-data-loss drops the removed property and starts the new one empty', async () => {
    things(`entity('Thing', { properties: { Bonus: p.integer() } }), entity('Widget', { properties: { Size: p.integer() } })`)
    const applied = await migrate('--allow-data-loss')
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.tenant).toMatchObject({ status: 'applied', losses: ['column "Thing"."Extra" with 1 values would be dropped'] })
    expect(await column('Thing', 'Bonus')).toEqual([null])
  })

  it('renames a searchable property: the search column follows it and finds its words', async () => {
    const widget = `entity('Thing', { properties: { Bonus: p.integer() } }), entity('Widget', { properties: { Size: p.integer() } })`
    things(`${widget}, entity('Doc', { properties: { Body: p.text().searchable() } })`)
    expect((await migrate()).code).toBe(0)
    await inTenant(many, 0, (client) => client.query(`insert into "Doc" ("Guid", "Body", "_Version") values (gen_random_uuid(), 'lovelace', 1)`))

    things(`${widget}, entity('Doc', { properties: { Text: p.text().searchable().renamedFrom('Body') } })`)
    const applied = await migrate()
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.tenant).toMatchObject({ status: 'applied', renames: ['property Doc.Body → Doc.Text'], losses: [] })
    expect(await column('Doc', 'Text')).toEqual(['lovelace'])
    expect(await column('Doc', '_Search')).toEqual(["'lovelace':1"])
  })
})

describe('a server running while another entityctl migrates its tenant', { timeout: SLOW }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-migr-under-'))
  const plugins = join(dir, 'plugins')
  let server: TestServer

  beforeAll(async () => {
    cpSync(DEMO_PLUGINS, plugins, { recursive: true })
    server = await startTestServer({ pluginsDir: plugins })
  })
  afterAll(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers 503 with Retry-After, not 500, for what its plugins no longer match', async () => {
    const token = await server.token()
    const sales = join(plugins, 'sales.ts')
    writeFileSync(sales, readFileSync(sales, 'utf8').replace("City: p.text().maxLength(60).searchable(),", "Town: p.text().maxLength(60).searchable().renamedFrom('City'),"))
    const migrated = await entityctl(server.configPath, 'migrate')
    expect(migrated.code, migrated.stderr).toBe(0)

    const write = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'Ada', City: 'London' } })
    expect([write.status, write.body.error.code, write.headers.get('retry-after')]).toEqual([503, 'ServiceUnavailable', '5'])
    expect(write.body.error.message).toContain("the tenant's schema was changed by a migration under it")
    const read = await call(`${server.api}/Customers?$select=City`, { token })
    expect(read.status).toBe(503)
  })

  it('is not migrated under by a second serve on its port: that one fails before it migrates', async () => {
    writeFileSync(join(plugins, 'shelves.ts'), `import { entity, p, plugin } from 'entityctl/plugin'\nexport default plugin({ entities: [entity('Shelf', { properties: { Label: p.text() } })] })\n`)
    const second = await entityctl(server.configPath, 'serve', '--port', new URL(server.url).port)
    expect([second.code, second.stderr]).toEqual([1, expect.stringContaining('is already in use; choose another with --port')])
    const database = loadConfig(server.configPath, {}).Tenants.get(server.tenants[0])!.Database
    const client = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), database) })
    await client.connect()
    try {
      expect((await client.query(`select to_regclass('"Shelf"') as shelf`)).rows).toEqual([{ shelf: null }])
    } finally {
      await client.end()
    }
  })
})

describe('a migration waiting behind a long transaction on its table', { timeout: SLOW }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-migr-locked-'))
  const plugins = join(dir, 'plugins')
  const sales = join(plugins, 'sales.ts')
  let server: TestServer
  let tenantUrl: string

  beforeAll(async () => {
    cpSync(DEMO_PLUGINS, plugins, { recursive: true })
    // Requests that queued behind an ALTER for good would be answered 503 after this.
    server = await startTestServer({ pluginsDir: plugins, config: { ApiOptions: { QueryTimeoutSeconds: 10 } } })
    tenantUrl = databaseUrl(testDatabaseUrl(), loadConfig(server.configPath, {}).Tenants.get(server.tenants[0])!.Database)
    // The plugins gain a property of Customer: the migration alters that table.
    writeFileSync(sales, readFileSync(sales, 'utf8').replace('City: p.text().maxLength(60).searchable(),', 'City: p.text().maxLength(60).searchable(),\n    Region: p.text().maxLength(20),'))
  })
  afterAll(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** A session that read Customer in a transaction it keeps open, as a long report would. */
  async function holdCustomer(): Promise<pg.Client> {
    const holder = new pg.Client({ connectionString: tenantUrl })
    await holder.connect()
    await holder.query('begin')
    await holder.query('select count(*) from "Customer"')
    return holder
  }

  const inDatabase = <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => onConnection(tenantUrl, work)

  const alterWaiting = () =>
    eventually(() =>
      inDatabase(async (client) => {
        const { rows } = await client.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike 'alter table "Customer"%'`)
        return rows.length > 0
      }),
    )
  const hasRegion = () => inDatabase(async (client) => (await client.query(`select 1 from information_schema.columns where table_name = 'Customer' and column_name = 'Region'`)).rows.length > 0)

  it('fails, naming the table and its holder, with nothing applied, while requests to the table are answered', async () => {
    const token = await server.token()
    const before = await inDatabase(recordedSchemaVersion)
    const holder = await holdCustomer()
    try {
      const migrating = entityctl(server.configPath, 'migrate', '--json')
      await alterWaiting()
      // Queued behind the ALTER for one lock timeout at most, not for as long as the holder lasts.
      for (let request = 0; request < 3; request++) expect((await call(`${server.api}/Customers`, { token })).status).toBe(200)
      const migrated = await migrating
      expect(migrated.code, migrated.stderr).toBe(1)
      expect(JSON.parse(migrated.stdout).error.message).toMatch(
        new RegExp(
          `^Migration of tenant '${server.tenants[0]}' was not applied: table "Customer" is held by another transaction \\(pid ${(holder as unknown as { processID: number }).processID}, a client, idle in transaction for \\d+ s\\), and the migration waited 3 s for it 3 times, requests to it served in between\\. End that transaction, or let it finish, then run \`entityctl migrate --tenant ${server.tenants[0]}\` again; nothing of this migration was applied\\.$`,
        ),
      )
    } finally {
      await holder.query('rollback')
      await holder.end()
    }
    expect(await hasRegion()).toBe(false)
    expect(await inDatabase(recordedSchemaVersion)).toBe(before)
    expect((await call(`${server.api}/Customers`, { token })).status).toBe(200)
  })

  it('applies once the holder has committed, requests to the table answered meanwhile', async () => {
    const token = await server.token()
    const holder = await holdCustomer()
    let migrating: ReturnType<typeof entityctl>
    try {
      migrating = entityctl(server.configPath, 'migrate')
      await alterWaiting()
      // Answered once the ALTER gave up its place in the queue: the migration tries again after it.
      expect((await call(`${server.api}/Customers`, { token })).status).toBe(200)
    } finally {
      await holder.query('commit')
      await holder.end()
    }
    const migrated = await migrating
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(migrated.stderr).toContain(`migrating tenant '${server.tenants[0]}': table "Customer" is held by another transaction; trying again (2 of 3)`)
    expect(await hasRegion()).toBe(true)
  })
})

/**
 * Two instances started at the same moment on many tenants whose schema is behind the
 * plugins (the case that deadlocked). MIGRATION_TENANTS sets the number (100 for the figure
 * in the README; 30 by default, to keep the suite's time reasonable).
 */
describe('many tenants, two instances', { timeout: 600_000 }, () => {
  const count = Number(process.env.MIGRATION_TENANTS ?? 30)
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-migr-many-'))
  const plugins = join(dir, 'plugins')
  let many: ManyTenants
  const servers: ServeProcess[] = []

  beforeAll(async () => {
    cpSync(DEMO_PLUGINS, plugins, { recursive: true })
    many = await createManyTenants({ count, serverUrl: testDatabaseUrl(), pluginsDir: plugins, parallel: 8, prepare: withAdmin })
    // Every tenant is now behind the plugins.
    writeFileSync(join(plugins, 'extra.ts'), `import { entity, p, plugin } from 'entityctl/plugin'\nexport default plugin({ entities: [entity('Shelf', { properties: { Label: p.text(), Slots: p.integer() } })] })\n`)
  }, 600_000)
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await many?.remove()
    rmSync(dir, { recursive: true, force: true })
  })

  it(`both start without a failure and every tenant serves the new schema`, async () => {
    const started = await Promise.allSettled([0, 1].map(() => serveProcess(many.configPath, {}, [], 300_000)))
    for (const result of started) if (result.status === 'fulfilled') servers.push(result.value)
    expect(started.map((result) => (result.status === 'rejected' ? String(result.reason) : 'serving'))).toEqual(['serving', 'serving'])
    for (const server of servers) {
      expect(server.lines.find((entry) => entry.msg === 'entityctl serving')).not.toHaveProperty('unavailable')
    }
    // Migrated once: one journal entry per tenant for the new schema, whichever instance made it.
    const entries = await inTenant(many, count - 1, async (c) => (await c.query(`select count(*)::int as n from "_Migration"`)).rows[0].n)
    expect(entries).toBe(2)
    for (const [i, server] of servers.entries()) {
      const tenant = many.tenants[(i * 7) % count]
      const { token } = await signIn(server.api, tenant)
      const shelves = await call(`${server.api}/Shelf`, { token })
      expect(shelves.status, shelves.text).toBe(200)
    }
  })
})
