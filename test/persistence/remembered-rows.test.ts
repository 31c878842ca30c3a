// Rows remembered from earlier writes (persistence/row-cache.ts) against a real server and
// PostgreSQL: a write takes the rows and member sets an earlier write loaded or wrote instead
// of loading them, and its own statement checks them (each row's version and xmin, each
// parent's count of members). Whatever changed them meanwhile (another instance, SQL that
// keeps a row's version, a row added or removed behind the parent's back, a deleted
// reference) costs a second try, never a wrong value or a wrong refusal. The demo's order total
// is a sumOf, which a write moves without reading the order's other lines; member sets, taken
// and counted, are tested with a total that reads them in remembered-members.test.ts.

import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { validationFailed } from '../../server/errors.ts'
import { poolSession } from '../../server/persistence/session.ts'
import type { UnitOfWork } from '../../server/persistence/unit-of-work.ts'
import { startServer, type RunningServer } from '../../server/start.ts'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'
import type { StatementRecorder } from '../support/statement-recorder.ts'
import { writeFixture, type WriteFixture } from '../support/write-fixture.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let a: TestServer
let b: RunningServer
let fixture: WriteFixture | undefined
let db: TenantDatabase
let recorder: StatementRecorder
let token = ''
let customer = ''
let products: readonly string[] = []

beforeAll(async () => {
  a = await startTestServer()
  b = await startServer({ configPath: a.configPath, port: 0, logger: pino({ level: 'silent' }) })
  fixture = await writeFixture(a)
  ;({ db, recorder, token, customer, products } = fixture)
})

afterAll(async () => {
  await fixture?.close()
  await b?.stop()
  await a?.stop()
})

async function post(set: string, body: unknown, api = a.api): Promise<any> {
  const response = await call(`${api}/${set}`, { method: 'POST', token, body })
  expect(response.status, response.text).toBe(200)
  return response.body
}

let number = 9000
/** Posts an order of `buyer` with lines of quantity 2, 3 and 5 of `goods`, replying with its Total. */
function postOrder(buyer = customer, goods: readonly string[] = products, api = a.api) {
  const lines = goods.map((product, i) => ({ Guid: randomUUID(), 'Product@odata.bind': `Products(${product})`, Quantity: [2, 3, 5][i] }))
  const body = { Guid: randomUUID(), Number: number++, 'Customer@odata.bind': `Customers(${buyer})`, Lines: lines }
  return call(`${api}/Orders?$select=Total`, { method: 'POST', token, body }).then((response) => ({ response, order: body.Guid, lines: lines.map((line) => line.Guid) }))
}

const patchQuantity = (line: string, quantity: number, api = a.api) => call(`${api}/OrderLines(${line})`, { method: 'PATCH', token, body: { Quantity: quantity } })
const total = async (order: string): Promise<number> => (await call(`${a.api}/Orders(${order})?$select=Total`, { token })).body.Total
/** Sets a product's price as a restore or an admin's SQL would: its row version stays. */
const setPriceBehindTheServersBack = (product: string, price: number) => db.pool.query('update "Product" set "Price" = $2 where "Guid" = $1', [product, price])

describe('a write with rows remembered from earlier writes', () => {
  it("takes an order's customer and products: the write alone, which checks each row's version and xmin", async () => {
    await postOrder() // loads the customer and the products, which the server remembers
    const { result, statements } = await recorder.during(() => postOrder())
    expect(result.response.status, result.response.text).toBe(200)
    expect(result.response.body.Total).toBe(235.17)
    expect(statements).toHaveLength(1)
    expect(statements[0]).toMatch(/^with "w0" as \(insert into "Order"/s)
    expect(statements[0]).toMatch(/select 1 from "Customer" t join \(values \(\$\d+::uuid, \$\d+::int, \$\d+::xid\)\) as v\(k, version, xmin\)/)
    expect(statements[0]).toMatch(/select 1 from "Product" t join \(values (\(.*?\)(, )?){3}\) as v\(k, version, xmin\)/)
  })

  it("takes a changed line's order as the order's creation left it: the write alone, which moves the total and reads no other line", async () => {
    const { order, lines } = await postOrder()
    const { result, statements } = await recorder.during(() => patchQuantity(lines[0], 7))
    expect(result.status, result.text).toBe(204)
    expect(statements).toHaveLength(1)
    expect(statements[0]).toMatch(/update "OrderLine" t set/)
    expect(statements[0]).toMatch(/update "Order" t set "Total" = t\."Total" \+ v\."Total"/)
    // The order's sum moves (sumOf): its other lines are neither taken nor counted, the line
    // is checked by its own update, and the order's total is added to as stored.
    expect(statements[0]).not.toMatch(/count\(\*\) as n from "OrderLine"/)
    expect(statements[0]).not.toMatch(/select 1 from "(Order|OrderLine)" t join \(values/)
    expect(await total(order)).toBe(300.12) // 7 × 12.99 + 3 × 63.78 + 5 × 3.57
    // And again, from what that write left.
    const again = await recorder.during(() => patchQuantity(lines[1], 1))
    expect(again.statements).toHaveLength(1)
    expect(await total(order)).toBe(172.56) // 7 × 12.99 + 1 × 63.78 + 5 × 3.57
  })

  it("forgets the order's remembered lines when a line joins it unread, so a PUT that sums them loads them once", async () => {
    const { order } = await postOrder() // its creation remembers the order's three lines as a set
    const added = await call(`${a.api}/OrderLines`, {
      method: 'POST',
      token,
      body: { 'Order@odata.bind': `Orders(${order})`, 'Product@odata.bind': `Products(${products[0]})`, Quantity: 1 },
    })
    expect(added.status, added.text).toBe(200)
    const stored = (await call(`${a.api}/Orders(${order})?$select=Number,CustomerGuid,OrderDate,Status`, { token })).body
    const body = { Number: stored.Number, CustomerGuid: stored.CustomerGuid, OrderDate: stored.OrderDate, Status: stored.Status }
    const { result, statements } = await recorder.during(() => call(`${a.api}/Orders(${order})`, { method: 'PUT', token, body }))
    expect(result.status, result.text).toBe(204)
    // A set of three taken for four lines would fail the write's count and run it again.
    expect(statements.filter((text) => text.includes('update "Order"'))).toHaveLength(1)
    expect(await total(order)).toBe(248.16) // 235.17 + 12.99
  })

  it('finds a price changed with its version kept, writes nothing, and runs again: the next order has the new price', async () => {
    await postOrder()
    await setPriceBehindTheServersBack(products[2], 4.57)
    try {
      const { result, statements } = await recorder.during(() => postOrder())
      expect(result.response.status, result.response.text).toBe(200)
      expect(result.response.body.Total).toBe(240.17) // 2 × 12.99 + 3 × 63.78 + 5 × 4.57
      expect(statements.filter((text) => text.startsWith('with "w0" as (insert into "Order"'))).toHaveLength(2)
      expect(statements.filter((text) => text.includes('union all'))).toHaveLength(1)
      const next = await recorder.during(() => postOrder())
      expect(next.result.response.body.Total).toBe(240.17)
      expect(next.statements).toHaveLength(1)
    } finally {
      await setPriceBehindTheServersBack(products[2], 3.57)
    }
  })

  it("finds the changed line's own price changed by SQL, version kept, and prices the change anew", async () => {
    const { order, lines } = await postOrder()
    // The line's own unit price, as a restore or an admin's SQL would change it: its version stays.
    await db.pool.query('update "OrderLine" set "UnitPrice" = 20 where "Guid" = $1', [lines[0]])
    const { result, statements } = await recorder.during(() => patchQuantity(lines[0], 7))
    expect(result.status, result.text).toBe(204)
    // The first write found the line changed and wrote nothing; the second ran on the row as stored.
    expect(statements.filter((text) => text.includes('update "OrderLine"'))).toHaveLength(2)
    expect(await total(order)).toBe(349.19) // 7 × 20 + 3 × 63.78 + 5 × 3.57
  })

  it('moves the total by the change alone when SQL changed lines behind the order\'s back; a PUT of the order sums every line', async () => {
    const { order, lines } = await postOrder()
    await fixture!.addLineBySql(order)
    expect((await patchQuantity(lines[0], 7)).status).toBe(204)
    expect(await total(order)).toBe(300.12) // 235.17 moved by 5 × 12.99: the line of 100 is not the server's
    const stored = (await call(`${a.api}/Orders(${order})?$select=Number,CustomerGuid,OrderDate,Status`, { token })).body
    const put = await call(`${a.api}/Orders(${order})`, {
      method: 'PUT',
      token,
      body: { Number: stored.Number, CustomerGuid: stored.CustomerGuid, OrderDate: stored.OrderDate, Status: stored.Status },
    })
    expect(put.status, put.text).toBe(204)
    expect(await total(order)).toBe(400.12) // computed anew from every line
  })

  it('refuses an order of a customer deleted since it was remembered as for any unknown customer', async () => {
    const buyer = (await post('Customers', { Name: 'Grace Hopper' })).Guid
    // An order refused by its rules still loaded (and so remembered) its customer.
    const refused = await call(`${a.api}/Orders`, {
      method: 'POST',
      token,
      body: { Number: number++, 'Customer@odata.bind': `Customers(${buyer})`, Lines: [{ 'Product@odata.bind': `Products(${products[0]})`, Quantity: 11 }] },
    })
    expect(refused.status).toBe(400)
    await db.pool.query('delete from "Customer" where "Guid" = $1', [buyer])
    const before = (await call(`${a.api}/Orders/$count`, { token })).text
    const { response } = await postOrder(buyer)
    expect(response.status, response.text).toBe(400)
    expect(response.body.error.details).toEqual([expect.objectContaining({ target: 'Customer', message: `No Customer has the Guid ${buyer}.` })])
    expect((await call(`${a.api}/Orders/$count`, { token })).text).toBe(before)
  })

  it('checks them before a unit that writes nothing answers, or before its refusal stands', async () => {
    const Product = db.model.entities.get('Product')!
    const session = poolSession(db)
    const priceOf = async (unit: UnitOfWork) => (await unit.load([{ entity: Product, key: products[1] }]))[0].values.Price
    expect(await session.write(priceOf)).toBe(63.78) // loaded, and remembered
    await setPriceBehindTheServersBack(products[1], 64.78)
    try {
      // Taken from the remembered row (63.78), found changed by the check, run again.
      expect(await session.write(priceOf)).toBe(64.78)
      const refusals: unknown[] = []
      const refuseUnlessFresh = async (unit: UnitOfWork) => {
        const price = await priceOf(unit)
        if (price !== 65.78) {
          refusals.push(price)
          throw validationFailed([{ code: 'ValidationFailed', target: 'Price', message: `not yet: ${price}` }])
        }
        return price
      }
      await setPriceBehindTheServersBack(products[1], 65.78)
      // The refusal rests on the remembered 64.78: it is checked, found stale, and the unit runs again.
      expect(await session.write(refuseUnlessFresh)).toBe(65.78)
      expect(refusals).toEqual([64.78])
    } finally {
      await setPriceBehindTheServersBack(products[1], 63.78)
    }
  })
})

describe('two instances on the same databases', () => {
  it('price each order on one with the price the other set just before, though it remembered the product', async () => {
    const product = (await post('Products', { Code: 'TWO-1', Name: 'Shared', Price: 1 })).Guid
    const order = (n: number) => ({ Number: 70_000 + n, 'Customer@odata.bind': `Customers(${customer})`, Lines: [{ 'Product@odata.bind': `Products(${product})`, Quantity: 1 }] })
    expect((await post('Orders?$select=Total', order(0))).Total).toBe(1)
    for (let n = 1; n <= 20; n++) {
      const price = 10 + n
      const changed = await call(`${b.url}/api/Products(${product})`, { method: 'PATCH', token, body: { Price: price } })
      expect(changed.status, changed.text).toBe(204)
      expect((await post('Orders?$select=Total', order(n))).Total).toBe(price)
    }
  })

  it("keep one order's total whichever of them changes which of its lines", async () => {
    const { order, lines } = await postOrder()
    const quantities = [2, 3, 5]
    for (let n = 0; n < 20; n++) {
      const line = n % 3
      quantities[line] = 1 + ((n * 7) % 10)
      expect((await patchQuantity(lines[line], quantities[line], n % 2 === 0 ? a.api : `${b.url}/api`)).status).toBe(204)
      const expected = Math.round((quantities[0] * 12.99 + quantities[1] * 63.78 + quantities[2] * 3.57) * 100) / 100
      expect(await total(order)).toBe(expected)
    }
  })
})
