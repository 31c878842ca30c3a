// sumOf (rules/moved-sums.ts): the demo's Order.Total is the sum of its lines' LineTotal, which
// a write moves by what it changed of the lines instead of reading them all. Whatever the write
// does to lines (changes, adds, moves between orders, deletes, several in one change set), the
// total it leaves is the sum of the lines as stored; the loader refuses a sumOf of no numbers.

import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildModel } from '../../server/model/build-model.ts'
import type { EntityData, EntityDecl } from '../../server/model/declarations.ts'
import { entity, p, plugin, sum, sumOf } from '../../server/plugin.ts'
import { parentsReachedBy } from '../../server/rules/dependencies.ts'
import { sumsMovedInSql } from '../../server/rules/moved-sums.ts'
import { writeFixture, type WriteFixture } from '../support/write-fixture.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let fixture: WriteFixture | undefined
let token = ''
let customer = ''
let products: readonly string[] = []

beforeAll(async () => {
  server = await startTestServer()
  fixture = await writeFixture(server)
  ;({ token, customer, products } = fixture)
})

afterAll(async () => {
  await fixture?.close()
  await server?.stop()
})

let number = 31_000
/** An order with lines of quantity 2, 3 and 5 of the three products (12.99, 63.78, 3.57: 235.17). */
async function postOrder(): Promise<{ order: string; lines: string[] }> {
  const lines = products.map((product, i) => ({ Guid: randomUUID(), 'Product@odata.bind': `Products(${product})`, Quantity: [2, 3, 5][i] }))
  const body = { Guid: randomUUID(), Number: number++, 'Customer@odata.bind': `Customers(${customer})`, Lines: lines }
  const response = await call(`${server.api}/Orders`, { method: 'POST', token, body })
  expect(response.status, response.text).toBe(200)
  return { order: body.Guid, lines: lines.map((line) => line.Guid) }
}

const send = async (method: string, path: string, body?: unknown) => {
  const response = await call(`${server.api}/${path}`, { method, token, body })
  expect(response.status, response.text).toBeLessThan(300)
  return response
}
const total = async (order: string): Promise<number> => (await call(`${server.api}/Orders(${order})?$select=Total`, { token })).body.Total
/** The sum of the order's lines as stored, added up by PostgreSQL. */
const storedSum = async (order: string): Promise<number> =>
  Number((await fixture!.db.pool.query('select coalesce(sum("LineTotal"), 0) as s from "OrderLine" where "Order_Guid" = $1', [order])).rows[0].s)

describe('a total kept by sumOf', () => {
  it('follows changed quantities, to the cent, over many changes', async () => {
    const { order, lines } = await postOrder()
    for (let n = 0; n < 30; n++) await send('PATCH', `OrderLines(${lines[n % 3]})`, { Quantity: 1 + ((n * 7) % 10) })
    expect(await total(order)).toBe(await storedSum(order))
  })

  it('moves a line from one order to another: both totals follow', async () => {
    const from = await postOrder()
    const to = await postOrder()
    await send('PATCH', `OrderLines(${from.lines[1]})`, { 'Order@odata.bind': `Orders(${to.order})` })
    expect(await total(from.order)).toBe(43.83) // 235.17 − 3 × 63.78
    expect(await total(to.order)).toBe(426.51) // 235.17 + 3 × 63.78
    expect([await storedSum(from.order), await storedSum(to.order)]).toEqual([43.83, 426.51])
  })

  it('follows lines added and deleted, and a deleted order takes its lines along', async () => {
    const { order, lines } = await postOrder()
    await send('POST', 'OrderLines', { 'Order@odata.bind': `Orders(${order})`, 'Product@odata.bind': `Products(${products[0]})`, Quantity: 1 })
    expect(await total(order)).toBe(248.16) // + 12.99
    await send('DELETE', `OrderLines(${lines[2]})`)
    expect(await total(order)).toBe(230.31) // − 5 × 3.57
    expect(await storedSum(order)).toBe(230.31)
    await send('DELETE', `Orders(${order})`)
    expect(await storedSum(order)).toBe(0)
  })

  it('counts every change of one change set once: two lines changed, one added, one deleted', async () => {
    const { order, lines } = await postOrder()
    const answer = await call(`${server.api}/$batch`, {
      method: 'POST',
      token,
      body: {
        requests: [
          { id: '1', method: 'PATCH', url: `OrderLines(${lines[0]})`, body: { Quantity: 10 }, atomicityGroup: 'g' },
          { id: '2', method: 'PATCH', url: `OrderLines(${lines[1]})`, body: { Quantity: 1 }, atomicityGroup: 'g' },
          { id: '3', method: 'POST', url: 'OrderLines', body: { 'Order@odata.bind': `Orders(${order})`, 'Product@odata.bind': `Products(${products[2]})`, Quantity: 4 }, atomicityGroup: 'g' },
          { id: '4', method: 'DELETE', url: `OrderLines(${lines[2]})`, atomicityGroup: 'g' },
        ],
      },
    })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.responses.map((r: { status: number }) => r.status)).toEqual([204, 204, 200, 204])
    expect(await total(order)).toBe(207.96) // 10 × 12.99 + 1 × 63.78 + 4 × 3.57
    expect(await storedSum(order)).toBe(207.96)
  })

  it('is computed from every line when the order has no stored total (a row written before the rule)', async () => {
    const { order, lines } = await postOrder()
    await fixture!.db.pool.query('update "Order" set "Total" = null where "Guid" = $1', [order])
    await send('PATCH', `OrderLines(${lines[0]})`, { Quantity: 3 })
    expect(await total(order)).toBe(248.16) // 3 × 12.99 + 3 × 63.78 + 5 × 3.57
  })
})

describe('sumOf in a plugin', () => {
  const build = (...entities: EntityDecl[]) => buildModel([{ source: 'plugins/shop.ts', decl: plugin({ entities }) }])
  const basket = (computed: EntityDecl['computed'], total = p.decimal(12, 2)) =>
    entity('Basket', { properties: { Total: total, Items: p.many('Item').via('Basket') }, computed })
  const item = entity('Item', { properties: { Basket: p.reference('Basket'), Price: p.decimal(12, 2), Name: p.text() } })

  it.each([
    ['a sum of what is not a collection', basket({ Total: sumOf('Total', 'Price') }), "Basket.computed.Total: sumOf('Total', …) needs a collection of Basket (p.many(...))"],
    ['a sum of a text', basket({ Total: sumOf('Items', 'Name') }), "Basket.computed.Total: sumOf('Items', 'Name') needs a number property of Item"],
    ['a sum into a text', basket({ Total: sumOf('Items', 'Price') }, p.text()), 'Basket.computed.Total: sumOf gives a number: declare the property as p.integer(), p.decimal() or p.double()'],
  ])('refuses %s at start, naming the rule', (_, declared, message) => {
    expect(() => build(declared, item)).toThrow(message)
  })

  it("loads a parent's members only for a rule that reads them one by one", () => {
    const moved = build(basket({ Total: sumOf('Items', 'Price') }), item)
    const [alone] = parentsReachedBy(moved, moved.entities.get('Item')!, ['Price'])
    expect(alone.withMembers).toBe(false)
    const most = { from: ['Items.Price'], value: (basket: EntityData) => Math.max(0, ...basket.Items.map((i: EntityData) => i.Price)) }
    const both = build(
      entity('Basket', { properties: { Total: p.decimal(12, 2), Most: p.decimal(12, 2), Items: p.many('Item').via('Basket') }, computed: { Total: sumOf('Items', 'Price'), Most: most } }),
      item,
    )
    const [members] = parentsReachedBy(both, both.entities.get('Item')!, ['Price'])
    expect(members.withMembers).toBe(true)
    expect(sum([{ Price: 0.1 }, { Price: 0.2 }], (i) => i.Price)).toBe(0.3)
  })

  it('moves a sum in SQL unless what no view shows needs the stored value: a validation of the parent, a range, encryption', () => {
    const movedIn = (declared: EntityDecl) => [...sumsMovedInSql(build(declared, item).entities.get('Basket')!)]
    expect(movedIn(basket({ Total: sumOf('Items', 'Price') }))).toEqual(['Total'])
    const checked = entity('Basket', {
      properties: { Total: p.decimal(12, 2), Items: p.many('Item').via('Basket') },
      computed: { Total: sumOf('Items', 'Price') },
      validations: { Total: (basket) => basket.Total < 100 || 'too dear' },
    })
    expect(movedIn(checked)).toEqual([])
    expect(movedIn(basket({ Total: sumOf('Items', 'Price') }, p.decimal(12, 2).max(100)))).toEqual([])
    expect(movedIn(basket({ Total: sumOf('Items', 'Price') }, p.decimal(12, 2).encrypted()))).toEqual([])
  })
})
