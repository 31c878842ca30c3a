// A sum that plugin code reads is written over the version read, not added to in SQL
// (rules/moved-sums.ts): a line may not take its order past 1,000, a validation that reads
// the order's Total through its view (plugins-total-read/) or filters orders on it with find
// (plugins-total-found/). Writers of one order's lines then meet on its version, and the rule
// holds against all of them at once; the demo's total, read by no rule, is added to instead
// (unit-of-work.test.ts).

import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parentsReachedBy } from '../../server/rules/dependencies.ts'
import { writeFixture, type WriteFixture } from '../support/write-fixture.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { writersAtOnce } from '../support/writers-at-once.ts'

let server: TestServer
let fixture: WriteFixture

/** A test server with the plugins of `folder` (beside this file) for the tests of one describe. */
function serving(folder: string): void {
  beforeAll(async () => {
    server = await startTestServer({ pluginsDir: fileURLToPath(new URL(`./${folder}`, import.meta.url)), config: { Database: { PoolSizePerTenant: 8 } } })
    fixture = await writeFixture(server)
  })
  afterAll(async () => {
    await fixture?.close()
    await server?.stop()
  })
}

let number = 41_000
/** An order with one line of quantity 1 of the second product (63.78) per key in `lines`. */
async function postOrder(lines: readonly string[]): Promise<string> {
  const order = randomUUID()
  const body = {
    Guid: order,
    Number: number++,
    'Customer@odata.bind': `Customers(${fixture.customer})`,
    Lines: lines.map((Guid) => ({ Guid, 'Product@odata.bind': `Products(${fixture.products[1]})`, Quantity: 1 })),
  }
  const response = await call(`${server.api}/Orders`, { method: 'POST', token: fixture.token, body })
  expect(response.status, response.text).toBe(200)
  return order
}

const total = async (order: string): Promise<number> => (await call(`${server.api}/Orders(${order})?$select=Total`, { token: fixture.token })).body.Total
const storedSum = async (order: string): Promise<number> =>
  Number((await fixture.db.pool.query('select sum("LineTotal") as s from "OrderLine" where "Order_Guid" = $1', [order])).rows[0].s)

/**
 * Until a session waits for a lock on the tenant's database. Asked on a connection of its own,
 * outside the holder's transaction, whose view of pg_stat_activity would stay as first read.
 */
async function untilWaitingForLock(): Promise<void> {
  for (;;) {
    const { rows } = await fixture.db.pool.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")
    if (rows[0].n > 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe.each([
  ['through its view', 'plugins-total-read'],
  ['in a find filter', 'plugins-total-found'],
])('a sum a rule reads %s', (_, folder) => {
  serving(folder)

  it('is set to the sum worked out, over the version read', async () => {
    const line = randomUUID()
    const order = await postOrder([line])
    const { result, statements } = await fixture.recorder.during(() =>
      call(`${server.api}/OrderLines(${line})`, { method: 'PATCH', token: fixture.token, body: { Quantity: 3 } }),
    )
    expect(result.status, result.text).toBe(204)
    const write = statements.find((text) => text.includes('update "Order"'))
    expect(write).toMatch(/update "Order" t set "Total" = v\."Total"/)
    expect(write).toMatch(/t\."_Version" = v\."_Version"/)
    expect(await total(order)).toBe(191.34) // 3 × 63.78
  })

  it("holds against writers of one order's lines at once: the ceiling is kept", async () => {
    const lines = Array.from({ length: 4 }, () => randomUUID())
    const order = await postOrder(lines) // 4 × 63.78 = 255.12
    const OrderLine = fixture.db.model.entities.get('OrderLine')!
    // Every writer has read its line and the order before any of them writes; each alone
    // would keep the order under 1,000 (+ 4 × 63.78), two together too, three not.
    const outcomes = await writersAtOnce(
      fixture.db,
      lines,
      (unit, key) => unit.load([{ entity: OrderLine, key, parents: parentsReachedBy(fixture.db.model, OrderLine, ['Quantity']) }]),
      ([line]) => {
        line.values.Quantity = 5
      },
    )
    const refusals = outcomes.flatMap(({ error }) => (error ? [error.message] : []))
    expect(refusals).toEqual(Array(2).fill('Validation failed: Quantity: The order may total at most 1000'))
    expect(await total(order)).toBe(765.36) // 255.12 + 2 × 4 × 63.78
    expect(await storedSum(order)).toBe(765.36)
  })

  it("takes the order's row before the line's, in the order a writer that keeps losing locks them (UnitOfWork.lock): they queue, never deadlock", async () => {
    const line = randomUUID()
    await postOrder([line])
    const order = (await fixture.db.pool.query('select "Order_Guid" as o from "OrderLine" where "Guid" = $1', [line])).rows[0].o
    const loser = await fixture.db.pool.connect()
    try {
      // A writer that lost three times locks table by table in name order: the order first.
      await loser.query('begin')
      await loser.query('select 1 from "Order" where "Guid" = $1 for update', [order])
      const patch = call(`${server.api}/OrderLines(${line})`, { method: 'PATCH', token: fixture.token, body: { Quantity: 2 } })
      await untilWaitingForLock()
      // The PATCH waits for the order holding nothing yet: the loser's next lock, the line's, is free.
      await loser.query('select 1 from "OrderLine" where "Guid" = $1 for update nowait', [line])
      await loser.query('commit')
      expect((await patch).status).toBe(204)
    } finally {
      await loser.query('rollback')
      loser.release()
    }
  })
})
