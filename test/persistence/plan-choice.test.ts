// Plan choice per read shape (persistence/plan-choice.ts): a shape whose runs take long is
// planned for its values, on a connection switched for that one statement and switched back
// before it returns to the pool; a shape that became quick again goes back to its generic plan.
// Against a real server's tenant database, with a pool of one connection so that what the
// connection holds (its prepared statements and their plan counts, its plan_cache_mode) can
// be read on it afterwards.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { CUSTOM_AFTER_MS, GENERIC_BELOW_MS, PlanChoice } from '../../server/persistence/plan-choice.ts'
import { poolSession } from '../../server/persistence/session.ts'
import { statementName } from '../../server/persistence/sql.ts'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'

describe('PlanChoice', () => {
  it('plans a shape for its values once its runs take long, and goes back once they are quick again', () => {
    const plans = new PlanChoice()
    plans.ran('quick', 2)
    expect(plans.custom('quick')).toBe(false)
    expect(plans.custom('never ran')).toBe(false)

    plans.ran('slow', CUSTOM_AFTER_MS * 3)
    expect(plans.custom('slow')).toBe(true)
    // One quick run does not flip it back: the average has to fall under GENERIC_BELOW_MS.
    plans.ran('slow', 1)
    expect(plans.custom('slow')).toBe(true)
    let runs = 1
    while (plans.custom('slow') && runs < 50) {
      plans.ran('slow', 1)
      runs++
    }
    expect(plans.custom('slow')).toBe(false)
    expect(runs).toBeGreaterThan(2)
  })

  it('keeps a shape whose average sits between the thresholds as it is', () => {
    const plans = new PlanChoice()
    const between = (CUSTOM_AFTER_MS + GENERIC_BELOW_MS) / 2
    for (let i = 0; i < 20; i++) plans.ran('generic', between)
    expect(plans.custom('generic')).toBe(false)
    plans.ran('custom', CUSTOM_AFTER_MS * 2)
    for (let i = 0; i < 20; i++) plans.ran('custom', between)
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

  it('runs a slow shape with a plan for its values from its next run on, and leaves the connection generic', async () => {
    const session = poolSession(db, { heavy: true })
    const slow = `select pg_sleep(${(CUSTOM_AFTER_MS * 2) / 1000}) is null as slept, $1::int as value`
    expect(await session.query(slow, [1])).toEqual([{ slept: false, value: 1 }])
    expect(await onTheConnection(slow)).toEqual({ generic: 1, custom: 0, mode: 'force_generic_plan' })

    expect(await session.query(slow, [2])).toEqual([{ slept: false, value: 2 }])
    expect(await onTheConnection(slow)).toEqual({ generic: 1, custom: 1, mode: 'force_generic_plan' })
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
    expect(await read(3)).toEqual(['1', '2', '3'])
    expect(await read(5)).toEqual(['1', '2', '3', '4', '5'])
    // The cursor gives the connection back once PostgreSQL is ready: wait for the switch back.
    await expect.poll(async () => (await onTheConnection(slow)).mode).toBe('force_generic_plan')
    expect(await onTheConnection(slow)).toMatchObject({ generic: 1, custom: 1 })
  })

  it('never times a read that is not heavy: a key read keeps its generic plan however long it takes', async () => {
    const session = poolSession(db)
    const slow = `select pg_sleep(${(CUSTOM_AFTER_MS * 2) / 1000}) is null as slept, $1::int as key`
    for (let i = 0; i < 2; i++) expect(await session.query(slow, [i])).toEqual([{ slept: false, key: i }])
    expect(await onTheConnection(slow)).toEqual({ generic: 2, custom: 0, mode: 'force_generic_plan' })
  })

  it('keeps a quick shape on its generic plan', async () => {
    const session = poolSession(db, { heavy: true })
    const quick = 'select $1::int + 1 as next'
    for (let i = 0; i < 3; i++) expect(await session.query(quick, [i])).toEqual([{ next: i + 1 }])
    expect(await onTheConnection(quick)).toEqual({ generic: 3, custom: 0, mode: 'force_generic_plan' })
  })
})
