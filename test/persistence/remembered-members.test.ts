// Member sets remembered from earlier writes (persistence/row-cache.ts), for a parent whose
// computed rule reads every member: the order's Total as a plain rule over its lines
// (plugins-total-by-rule/), where the demo's sumOf moves it without them. A write that changes
// a line takes the order's lines as an earlier write left them, and its statement counts them:
// a line added or removed behind the order's back costs a second try, never a wrong total.

import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'
import type { StatementRecorder } from '../support/statement-recorder.ts'
import { writeFixture, type WriteFixture } from '../support/write-fixture.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let fixture: WriteFixture | undefined
let db: TenantDatabase
let recorder: StatementRecorder
let token = ''
let customer = ''
let products: readonly string[] = []

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins-total-by-rule', import.meta.url)) })
  fixture = await writeFixture(server)
  ;({ db, recorder, token, customer, products } = fixture)
})

afterAll(async () => {
  await fixture?.close()
  await server?.stop()
})

let number = 9000
/** Posts an order with lines of quantity 2, 3 and 5 of the three products (235.17). */
async function postOrder() {
  const lines = products.map((product, i) => ({ Guid: randomUUID(), 'Product@odata.bind': `Products(${product})`, Quantity: [2, 3, 5][i] }))
  const body = { Guid: randomUUID(), Number: number++, 'Customer@odata.bind': `Customers(${customer})`, Lines: lines }
  const response = await call(`${server.api}/Orders?$select=Total`, { method: 'POST', token, body })
  expect(response.status, response.text).toBe(200)
  return { order: body.Guid, lines: lines.map((line) => line.Guid) }
}

const patchQuantity = (line: string, quantity: number) => call(`${server.api}/OrderLines(${line})`, { method: 'PATCH', token, body: { Quantity: quantity } })
const total = async (order: string): Promise<number> => (await call(`${server.api}/Orders(${order})?$select=Total`, { token })).body.Total

describe('a total computed from every member, with member sets remembered from earlier writes', () => {
  it("takes a changed line's order and the order's lines as the order's creation left them: the write alone, which counts the lines", async () => {
    const { order, lines } = await postOrder()
    const { result, statements } = await recorder.during(() => patchQuantity(lines[0], 7))
    expect(result.status, result.text).toBe(204)
    expect(statements).toHaveLength(1)
    expect(statements[0]).toMatch(/update "OrderLine" t set/)
    expect(statements[0]).toMatch(/select 1 from \(select count\(\*\) as n from "OrderLine" t where t\."Order_Guid" = \$\d+::uuid\) c where c\.n = \$\d+::int/)
    expect(await total(order)).toBe(300.12) // 7 × 12.99 + 3 × 63.78 + 5 × 3.57
    const again = await recorder.during(() => patchQuantity(lines[1], 1))
    expect(again.statements).toHaveLength(1)
    expect(await total(order)).toBe(172.56) // 7 × 12.99 + 1 × 63.78 + 5 × 3.57
  })

  it("counts a line added by SQL that leaves the order alone in the next change's total", async () => {
    const { order, lines } = await postOrder()
    await fixture!.addLineBySql(order)
    expect((await patchQuantity(lines[0], 7)).status).toBe(204)
    expect(await total(order)).toBe(400.12) // 300.12 and the line of 100
  })

  it("leaves a line removed by SQL out of the next change's total", async () => {
    const { order, lines } = await postOrder()
    await db.pool.query('delete from "OrderLine" where "Guid" = $1', [lines[1]])
    expect((await patchQuantity(lines[0], 7)).status).toBe(204)
    expect(await total(order)).toBe(108.78) // 7 × 12.99 + 5 × 3.57
  })
})
