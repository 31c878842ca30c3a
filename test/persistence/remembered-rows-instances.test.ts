// Rows a server remembers for its writes (persistence/row-cache.ts) with a second instance on
// the same databases: what one instance changes is what the other's next write uses, though
// the other remembered the row before the change.

import { afterAll, beforeAll, expect, it } from 'vitest'
import pino from 'pino'
import { startServer, type RunningServer } from '../../server/start.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let a: TestServer
let b: RunningServer
let token: string

beforeAll(async () => {
  a = await startTestServer()
  b = await startServer({ configPath: a.configPath, port: 0, logger: pino({ level: 'silent' }) })
  token = await a.token()
})
afterAll(async () => {
  await b?.stop()
  await a?.stop()
})

async function post(api: string, set: string, body: unknown): Promise<any> {
  const response = await call(`${api}/${set}`, { method: 'POST', token, body })
  expect(response.status, response.text).toBe(200)
  return response.body
}

it("prices each order on one instance with the price the other instance set just before", async () => {
  const customer = (await post(a.api, 'Customers', { Name: 'Two Instances' })).Guid
  const product = (await post(a.api, 'Products', { Code: 'TWO-1', Name: 'Shared', Price: 1 })).Guid
  const order = (n: number) => ({ Number: 70_000 + n, 'Customer@odata.bind': `Customers(${customer})`, Lines: [{ 'Product@odata.bind': `Products(${product})`, Quantity: 1 }] })
  // The first order makes instance a remember the customer and the product.
  expect((await post(a.api, 'Orders?$select=Total', order(0))).Total).toBe(1)
  for (let n = 1; n <= 20; n++) {
    const price = 10 + n
    const changed = await call(`${b.url}/api/Products(${product})`, { method: 'PATCH', token, body: { Price: price } })
    expect(changed.status, changed.text).toBe(204)
    expect((await post(a.api, 'Orders?$select=Total', order(n))).Total).toBe(price)
  }
})
