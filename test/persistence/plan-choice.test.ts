// Plan choice per read shape (persistence/plan-choice.ts): a shape whose runs take long is
// tried with plans made for its values, in a read-only transaction of its own whose setting
// ends with it, and keeps them only while they are quicker, measured again from time to time.
// Against a real server's tenant database, with a pool of one connection so that what the
// connection holds (its prepared statements and their plan counts, its plan_cache_mode) can
// be read on it afterwards.

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { SECTIONS } from '../../server/config/schema.ts'
import { CUSTOM_MUST_WIN_BY, PlanChoice, RETRY_RUNS, RUNS } from '../../server/persistence/plan-choice.ts'
import { poolSession } from '../../server/persistence/session.ts'
import { statementName } from '../../server/persistence/sql.ts'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'

/** The default threshold, which the test server keeps. */
const CUSTOM_AFTER_MS = SECTIONS.Database.PlanForValuesAfterMs.default

describe('PlanChoice', () => {
  const slowly = CUSTOM_AFTER_MS * 3
  const under = CUSTOM_AFTER_MS * 0.75
  const generic = (plans: PlanChoice, shape: string, ms: number, runs = 1) => {
    for (let run = 0; run < runs; run++) plans.ran(shape, ms, false)
  }
  const forValues = (plans: PlanChoice, shape: string, ms: number, runs = 1) => {
    for (let run = 0; run < runs; run++) plans.ran(shape, ms, true)
  }

  it('tries plans made for the values once the last generic runs were all slow, and keeps them when they win', () => {
    const plans = new PlanChoice(CUSTOM_AFTER_MS)
    generic(plans, 'slow', slowly, RUNS - 1)
    expect(plans.custom('slow')).toBe(false)
    generic(plans, 'slow', slowly)
    expect(plans.custom('slow')).toBe(true)
    forValues(plans, 'slow', slowly * (1 - CUSTOM_MUST_WIN_BY), RUNS)
    expect(plans.custom('slow')).toBe(true)
    expect(plans.custom('never ran')).toBe(false)
  })

  it('goes back to the generic plan when plans made for the values did not win, and tries them again only after RETRY_RUNS runs', () => {
    const plans = new PlanChoice(CUSTOM_AFTER_MS)
    generic(plans, 'sleep', slowly, RUNS)
    // As quick as the generic plan (a statement that only waits): the planning is not repaid.
    forValues(plans, 'sleep', slowly, RUNS - 1)
    expect(plans.custom('sleep')).toBe(true)
    forValues(plans, 'sleep', slowly)
    expect(plans.custom('sleep')).toBe(false)
    generic(plans, 'sleep', slowly, RETRY_RUNS - 1)
    expect(plans.custom('sleep')).toBe(false)
    generic(plans, 'sleep', slowly)
    expect(plans.custom('sleep')).toBe(true)
  })

  it('measures a winning plan made for the values against the generic plan again after RETRY_RUNS runs', () => {
    const plans = new PlanChoice(CUSTOM_AFTER_MS)
    generic(plans, 'data', slowly, RUNS)
    forValues(plans, 'data', slowly / 2, RUNS)
    forValues(plans, 'data', slowly / 2, RETRY_RUNS - 1)
    expect(plans.custom('data')).toBe(true)
    forValues(plans, 'data', slowly / 2)
    expect(plans.custom('data')).toBe(false)
    // The generic plan is now as quick (the data changed): after its runs and a trial, it stays.
    generic(plans, 'data', slowly / 2, RUNS)
    expect(plans.custom('data')).toBe(true)
    forValues(plans, 'data', slowly / 2, RUNS)
    expect(plans.custom('data')).toBe(false)
  })

  it('keeps plans made for the values that are much quicker, however quick: the generic plan is the slow one', () => {
    const plans = new PlanChoice(CUSTOM_AFTER_MS)
    generic(plans, 'steep', CUSTOM_AFTER_MS * 1.2, RUNS)
    forValues(plans, 'steep', CUSTOM_AFTER_MS * 0.3, RUNS * 10)
    expect(plans.custom('steep')).toBe(true)
  })

  it('takes a slow first run on a cold connection for what it is: the quick runs after it decide', () => {
    const plans = new PlanChoice(CUSTOM_AFTER_MS)
    generic(plans, 'cold', slowly)
    generic(plans, 'cold', 2, RUNS * 3)
    expect(plans.custom('cold')).toBe(false)
  })

  it('leaves a generic shape under the threshold alone, and keeps winning plans for the values that run under it', () => {
    const plans = new PlanChoice(CUSTOM_AFTER_MS)
    generic(plans, 'generic', under, RUNS * 3)
    expect(plans.custom('generic')).toBe(false)
    generic(plans, 'custom', slowly, RUNS)
    forValues(plans, 'custom', under, RUNS * 3)
    expect(plans.custom('custom')).toBe(true)
  })
})

describe('reads of a tenant database', () => {
  let server: TestServer
  let registry: TenantRegistry
  let db: TenantDatabase

  beforeAll(async () => {
    server = await startTestServer({ config: { Database: { PoolSizePerTenant: 1 } } })
    const config = loadConfig(server.configPath, {})
    registry = new TenantRegistry(config, await loadModel(config.Server.PluginsDir), TEST_DATABASE_URL)
    db = (await registry.get(server.tenants[0]))!
  })

  afterAll(async () => {
    await registry?.close()
    await server?.stop()
  })

  /** What the pool's one connection says of the statement: its plans so far, and its mode now. */
  async function onTheConnection(text: string) {
    const { rows } = await db.pool.query<{ generic_plans: string; custom_plans: string; mode: string }>(
      `select generic_plans, custom_plans, current_setting('plan_cache_mode') as mode from pg_prepared_statements where name = $1`,
      [statementName(text)],
    )
    expect(rows).toHaveLength(1)
    return { generic: Number(rows[0].generic_plans), custom: Number(rows[0].custom_plans), mode: rows[0].mode }
  }

  it('runs a slow shape with a plan for its values once its runs were all slow, and leaves the connection generic', async () => {
    const session = poolSession(db, { heavy: true })
    const slow = `select pg_sleep(${(CUSTOM_AFTER_MS * 2) / 1000}) is null as slept, $1::int as value,
                         current_setting('plan_cache_mode') as mode, current_setting('transaction_read_only') as "readOnly"`
    const generic = { slept: false, mode: 'force_generic_plan', readOnly: 'off' }
    for (let run = 1; run <= RUNS; run++) expect(await session.query(slow, [run])).toEqual([{ ...generic, value: run }])
    expect(await onTheConnection(slow)).toEqual({ generic: RUNS, custom: 0, mode: 'force_generic_plan' })

    // Planned for its values inside a read-only transaction of its own, which ends with it.
    expect(await session.query(slow, [0])).toEqual([{ slept: false, value: 0, mode: 'force_custom_plan', readOnly: 'on' }])
    expect(await onTheConnection(slow)).toEqual({ generic: RUNS, custom: 1, mode: 'force_generic_plan' })
  })

  it('streams a slow shape through a cursor the same way', async () => {
    const session = poolSession(db, { heavy: true })
    const slow = `select pg_sleep(${(CUSTOM_AFTER_MS * 2) / 1000}) is null as slept, n::text from generate_series(1, $1::int) n`
    const read = async (rows: number) => {
      const cursor = await session.cursor!(slow, [rows], { batchRows: 2, maxBytes: 1 << 20 })
      const got: unknown[] = []
      for (let batch = await cursor.next(); ; batch = await cursor.next()) {
        got.push(...batch.rows.map((row) => row.n))
        if (batch.done) return got
      }
    }
    for (let run = 1; run <= RUNS; run++) expect(await read(3)).toEqual(['1', '2', '3'])
    expect(await read(5)).toEqual(['1', '2', '3', '4', '5'])
    expect(await onTheConnection(slow)).toEqual({ generic: RUNS, custom: 1, mode: 'force_generic_plan' })
  })

  it('never times a read that is not heavy: a key read keeps its generic plan however long it takes', async () => {
    const session = poolSession(db)
    const slow = `select pg_sleep(${(CUSTOM_AFTER_MS * 2) / 1000}) is null as slept, $1::int as key`
    for (let i = 0; i <= RUNS; i++) expect(await session.query(slow, [i])).toEqual([{ slept: false, key: i }])
    expect(await onTheConnection(slow)).toEqual({ generic: RUNS + 1, custom: 0, mode: 'force_generic_plan' })
  })

  /** The tenant's database opened anew with these settings (as environment overrides) for `work`, then closed. */
  async function withSettings(settings: Record<string, string>, work: (database: TenantDatabase) => Promise<void>) {
    const config = loadConfig(server.configPath, { ...process.env, ...settings })
    const registry = new TenantRegistry(config, await loadModel(config.Server.PluginsDir), TEST_DATABASE_URL)
    try {
      await work((await registry.get(server.tenants[0]))!)
    } finally {
      await registry.close()
    }
  }

  it('divides a run\'s time by the statements of its tenant running beside it: under load every statement is slower', async () => {
    await withSettings({ Database__PoolSizePerTenant: '4' }, async (busy) => {
      const session = poolSession(busy, { heavy: true })
      // Slow alone; beside three other connections in use, it counts as a quarter as long: no
      // longer slow, with room for a loaded machine (run beside the rest of the suite, beside
      // one other and so halved, 45 ms of sleep took over 60).
      const slow = `select pg_sleep(${(CUSTOM_AFTER_MS * 1.5) / 1000}) is null as slept, $1::int as beside`
      const run = async (value: number) => expect(await session.query(slow, [value])).toEqual([{ slept: false, beside: value }])
      for (let value = 1; value < RUNS; value++) await run(value)
      const others = [await busy.pool.connect(), await busy.pool.connect(), await busy.pool.connect()]
      try {
        await run(RUNS)
      } finally {
        for (const other of others) other.release()
      }
      expect(busy.plans.custom(statementName(slow))).toBe(false)
      for (let value = 1; value <= RUNS; value++) await run(RUNS + value)
      expect(busy.plans.custom(statementName(slow))).toBe(true)
    })
  })

  it('does not time a read whose client went away: its cancelled statement would make a slow shape pass for quick', async () => {
    // The sleep is a parameter: slow runs make the shape slow, then one that would sleep a
    // minute is abandoned once PostgreSQL runs it (not after a guessed delay, which a loaded
    // machine outlasts).
    const slow = 'select pg_sleep($2::float8) is null as slept, $1::int as abandoned'
    for (let run = 1; run <= RUNS; run++) await poolSession(db, { heavy: true }).query(slow, [run, (CUSTOM_AFTER_MS * 2) / 1000])
    expect(db.plans.custom(statementName(slow))).toBe(true)
    const client = new AbortController()
    const read = poolSession(db, { heavy: true, signal: client.signal }).query(slow, [0, 60])
    // Watched from a connection of its own: the tenant's pool has one, and the read holds it.
    const watcher = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await watcher.connect()
    try {
      const running = `select count(*)::int as n from pg_stat_activity where state = 'active' and query like '%as abandoned%' and pid <> pg_backend_pid()`
      await expect.poll(async () => (await watcher.query(running)).rows[0].n).toBe(1)
    } finally {
      await watcher.end()
    }
    client.abort(new Error('the client went away'))
    await expect(read).rejects.toThrow()
    expect(db.plans.custom(statementName(slow))).toBe(true)
  })

  it('times nothing and plans every statement generically with PlanForValuesAfterMs 0', async () => {
    await withSettings({ Database__PlanForValuesAfterMs: '0' }, async (database) => {
      const session = poolSession(database, { heavy: true })
      const slow = `select pg_sleep(${(CUSTOM_AFTER_MS * 2) / 1000}) is null as slept, $1::int as unplanned`
      for (let run = 0; run <= RUNS; run++) expect(await session.query(slow, [run])).toEqual([{ slept: false, unplanned: run }])
      expect(database.plans.custom(statementName(slow))).toBe(false)
    })
  })

  it('keeps a quick shape on its generic plan', async () => {
    const session = poolSession(db, { heavy: true })
    const quick = 'select $1::int + 1 as next'
    for (let i = 0; i < 3; i++) expect(await session.query(quick, [i])).toEqual([{ next: i + 1 }])
    expect(await onTheConnection(quick)).toEqual({ generic: 3, custom: 0, mode: 'force_generic_plan' })
  })
})
