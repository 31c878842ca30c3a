// Business rules on every write (issue 4): defaults, corrections, computed properties across
// entities, validations and field constraints, from HTTP and from code, with nothing
// committed when a rule fails, and no lost update when writes race for one computed value.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { buildModel } from '../../server/model/build-model.ts'
import { entity, p, plugin } from '../../server/plugin.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { loadConfig } from '../../server/config/load-config.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { loadModel } from '../../server/model/load-plugins.ts'

let server: TestServer
let token: string
let api: string
let database: pg.Client

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
  const config = loadConfig(server.configPath, {})
  const tenant = config.Tenants.get(server.tenants[0])!
  database = new pg.Client({ connectionString: new TenantRegistry(config, await loadModel(config.Server.PluginsDir), config.Database.ConnectionString).urlOf(tenant) })
  await database.connect()
})
afterAll(async () => {
  await database?.end()
  await server?.stop()
})

const post = (path: string, body: unknown) => call(`${api}/${path}`, { method: 'POST', token, body })
const patch = (path: string, body: unknown) => call(`${api}/${path}`, { method: 'PATCH', token, body })

async function makeOrder(number: number, quantities: number[], price = 10) {
  const customer = (await post('Customers', { Name: `Customer ${number}` })).body
  const product = (await post('Products', { Code: `R${number}`, Name: 'Thing', Price: price })).body
  const order = (
    await post('Orders?$expand=Lines($orderby=Quantity)', {
      Number: number,
      'Customer@odata.bind': `Customers(${customer.Guid})`,
      Lines: quantities.map((Quantity) => ({ Quantity, 'Product@odata.bind': `Products(${product.Guid})` })),
    })
  ).body
  return { customer, product, order }
}

async function stored(sql: string, params: unknown[]) {
  return (await database.query(sql, params)).rows
}

describe('defaults', () => {
  it('fill empty properties before save: Status, OrderDate, UnitPrice from the product', async () => {
    const { order } = await makeOrder(5001, [2], 4.5)
    const [row] = await stored('select "Status", "OrderDate"::text as d from "Order" where "Guid" = $1', [order.Guid])
    expect(row).toEqual({ Status: 'Open', d: new Date().toISOString().slice(0, 10) })
    const [line] = await stored('select "UnitPrice"::text as p from "OrderLine" where "Order_Guid" = $1', [order.Guid])
    expect(line.p).toBe('4.50')
  })

  it('leave given values alone', async () => {
    const customer = (await post('Customers', { Name: 'Given' })).body
    const response = await post('Orders?$select=Status,OrderDate', { Number: 5002, Status: 'Closed', OrderDate: '2024-02-29', 'Customer@odata.bind': `Customers(${customer.Guid})` })
    expect(response.body).toMatchObject({ Status: 'Closed', OrderDate: '2024-02-29' })
  })
})

describe('corrections', () => {
  it('transform values when they are set, on create and on update', async () => {
    const product = (await post('Products?$select=Code,Title', { Code: '  ab12 ', Name: 'Bolt', Price: 1 })).body
    expect(product).toMatchObject({ Code: 'AB12', Title: 'AB12 Bolt' })
    const updated = await patch(`Products(${product.Guid})?$select=Code,Title`, { Code: 'cd34' })
    expect(updated.body).toMatchObject({ Code: 'CD34', Title: 'CD34 Bolt' })
  })
})

describe('computed properties', () => {
  it('recompute the line and the order when a quantity changes', async () => {
    const { order } = await makeOrder(5003, [1, 2], 10)
    const line = order.Lines[0].Guid
    const response = await patch(`OrderLines(${line})?$select=LineTotal&$expand=Order($select=Total)`, { Quantity: 5 })
    expect(response.body).toMatchObject({ LineTotal: 50, Order: { Total: 70 } })
  })

  it('recompute the order when a line is added or deleted', async () => {
    const { order, product } = await makeOrder(5004, [1], 10)
    const added = await post('OrderLines?$expand=Order($select=Total)', { Quantity: 3, 'Order@odata.bind': `Orders(${order.Guid})`, 'Product@odata.bind': `Products(${product.Guid})` })
    expect(added.body.Order.Total).toBe(40)
    expect((await call(`${api}/OrderLines(${added.body.Guid})`, { method: 'DELETE', token })).status).toBe(204)
    const [row] = await stored('select "Total"::text as t from "Order" where "Guid" = $1', [order.Guid])
    expect(row.t).toBe('10.00')
  })

  it('propagate a parent title to its lines (Order.Title → OrderLine.Title)', async () => {
    const { order } = await makeOrder(5005, [1], 1)
    await patch(`Orders(${order.Guid})`, { Number: 5555 })
    const [line] = await stored('select "Title" from "OrderLine" where "Order_Guid" = $1', [order.Guid])
    expect(line.Title).toBe('Order 5555 / R5005')
  })

  it('move a line between orders and recompute both', async () => {
    const first = await makeOrder(5006, [2], 10)
    const second = await makeOrder(5007, [1], 10)
    await patch(`OrderLines(${first.order.Lines[0].Guid})`, { 'Order@odata.bind': `Orders(${second.order.Guid})` })
    const totals = await stored('select "Number", "Total"::text as t from "Order" where "Number" in (5006, 5007) order by "Number"', [])
    expect(totals).toEqual([{ Number: 5006, t: '0.00' }, { Number: 5007, t: '30.00' }])
  })

  it('lose no update when lines of one order change concurrently', async () => {
    const { order } = await makeOrder(5008, [1, 1, 1, 1, 1, 1], 1)
    const lines = order.Lines.map((l: any) => l.Guid)
    const results = await Promise.all(lines.map((guid: string, i: number) => patch(`OrderLines(${guid})`, { Quantity: i + 2 })))
    expect(results.map((r) => r.status)).toEqual(lines.map(() => 204))
    const [row] = await stored('select "Total"::text as t, (select sum("LineTotal")::text from "OrderLine" where "Order_Guid" = $1) as s from "Order" where "Guid" = $1', [order.Guid])
    expect(row.t).toBe(row.s)
    expect(row.t).toBe('27.00')
  })
})

describe('validations', () => {
  it('report every failing rule, each targeted, and commit nothing', async () => {
    const { order } = await makeOrder(5009, [1], 2)
    const customer = (await post('Customers', { Name: 'Nothing' })).body
    const response = await post('Orders', {
      Number: 5010,
      'Customer@odata.bind': `Customers(${customer.Guid})`,
      Status: 'Pending',
      Lines: [{ Quantity: 0, 'Product@odata.bind': `Products(${order.Lines[0].Guid})` }],
    })
    expect(response.status).toBe(400)
    const rows = await stored('select count(*)::int as n from "Order" where "Number" = 5010', [])
    expect(rows[0].n).toBe(0)
  })

  it('check min, max, required and enumeration values', async () => {
    const response = await post('Products', { Code: 'NEG', Name: 'Negative', Price: -1 })
    expect(response.status).toBe(400)
    expect(response.body.error.details).toEqual([{ code: 'ValidationFailed', target: 'Price', message: 'Price must be at least 0' }])
    const missing = await post('Products', { Code: 'NONAME', Price: 1 })
    expect(missing.body.error.details).toEqual([expect.objectContaining({ target: 'Name', message: 'Name is required' })])
  })

  it('reject a reference to an entity that does not exist', async () => {
    const response = await post('Orders', { Number: 5011, 'Customer@odata.bind': 'Customers(00000000-0000-4000-8000-000000000000)' })
    expect(response.status).toBe(400)
    expect(response.body.error.message).toContain('Customer')
  })
})

describe('writes from code', () => {
  it('pass the same rules: a user added by the CLI gets its computed Title', async () => {
    const [user] = await stored('select "Title", "HasFullAccess" from "User" where "Username" = $1', ['admin'])
    expect(user).toEqual({ Title: 'admin', HasFullAccess: true })
  })
})

describe('rule declarations', () => {
  it('refuse a computed-property cycle at start, naming the properties', () => {
    const looped = entity('Loop', {
      properties: { A: p.integer(), B: p.integer() },
      computed: { A: { from: ['B'], value: (e) => e.B }, B: { from: ['A'], value: (e) => e.A } },
    })
    expect(() => buildModel([{ source: 'plugins/loop.ts', decl: plugin({ entities: [looped] }) }])).toThrow(/plugins\/loop\.ts: Loop\.computed: rule cycle: Loop\.(A|B) → Loop\.(A|B) → Loop\.(A|B)/)
  })

  it('refuse a rule on an unknown property, naming file, entity and property', () => {
    const wrong = entity('Wrong', { properties: { A: p.text() }, corrections: { Nope: (v) => v } })
    expect(() => buildModel([{ source: 'plugins/wrong.ts', decl: plugin({ entities: [wrong] }) }])).toThrow('plugins/wrong.ts: Wrong.corrections.Nope: names no property of the entity')
  })
})
