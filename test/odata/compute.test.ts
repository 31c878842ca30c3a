// $compute (OData 4.01) against a real server: computed values at the top level, by key and in
// $expand, usable in $select, $filter and $orderby, checked against the same computation in
// JavaScript over the rows; and the refusals.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string
const customers: { Guid: string; Name: string }[] = []
const orders: { Guid: string; Number: number; Customer: string; Quantity: number }[] = []

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
  const product = (await post('Products', { Code: 'C1', Name: 'Coffee', Price: 3.25 })).Guid
  for (const name of ['Ada', 'Bob']) customers.push({ Guid: (await post('Customers', { Name: name })).Guid, Name: name })
  for (let i = 0; i < 6; i++) {
    const customer = customers[i % 2]
    const quantity = (i % 5) + 1
    const lines = [{ 'Product@odata.bind': `Products(${product})`, Quantity: quantity }]
    const created = await post('Orders', { Number: 100 + i, 'Customer@odata.bind': `Customers(${customer.Guid})`, Lines: lines })
    orders.push({ Guid: created.Guid, Number: 100 + i, Customer: customer.Name, Quantity: quantity })
  }
})
afterAll(async () => server?.stop())

async function post(path: string, body: unknown) {
  const answer = await call(`${api}/${path}`, { method: 'POST', token, body })
  expect(answer.status, answer.text).toBe(200)
  return answer.body
}
const get = (path: string) => call(`${api}/${path}`, { token })
const total = (order: { Quantity: number }) => Math.round(order.Quantity * 325) / 100

describe('$compute', () => {
  it('computes values usable in $select, $filter and $orderby, as JavaScript computes them', async () => {
    const answer = await get('Orders?$compute=Total mul 2 as Double,Number add 1 as Next&$select=Number,Double,Next&$filter=Double gt 10&$orderby=Double desc,Number')
    expect(answer.status, answer.text).toBe(200)
    const expected = orders
      .map((o) => ({ Number: o.Number, Double: total(o) * 2, Next: o.Number + 1 }))
      .filter((o) => o.Double > 10)
      .sort((a, b) => b.Double - a.Double || a.Number - b.Number)
    expect(answer.body.value.map((o: any) => ({ Number: o.Number, Double: asNumber(o.Double), Next: o.Next }))).toEqual(expected)
    expect(decodeURIComponent(answer.body['@odata.context'])).toMatch(/#Orders\(Number,Double,Next\)$/)
  })

  it('reaches through references, and answers every computed value without $select', async () => {
    const answer = await get(`Orders?$compute=Customer/Name as Buyer,concat(Customer/Name,'!') as Shout&$orderby=Number`)
    expect(answer.body.value.map((o: any) => [o.Buyer, o.Shout])).toEqual(orders.map((o) => [o.Customer, `${o.Customer}!`]))
    expect(decodeURIComponent(answer.body['@odata.context'])).toMatch(/#Orders\(Guid,Buyer,Shout\)$/)
  })

  it('computes on one entity read by key', async () => {
    const answer = await get(`Orders(${orders[2].Guid})?$compute=Number mul 10 as Big,Number gt 101 as Late&$select=Big,Late`)
    expect(answer.body).toMatchObject({ Big: 1020, Late: true })
  })

  it('computes inside $expand, with the alias in the nested $select, $filter and $orderby', async () => {
    const answer = await get(`Customers(${customers[0].Guid})?$select=Name&$expand=Orders($compute=Number sub 100 as Rank;$select=Rank;$filter=Rank ge 2;$orderby=Rank desc)`)
    expect(answer.status, answer.text).toBe(200)
    const ranks = orders.filter((o) => o.Customer === 'Ada').map((o) => o.Number - 100).filter((r) => r >= 2).sort((a, b) => b - a)
    expect(answer.body.Orders.map((o: any) => o.Rank)).toEqual(ranks)
  })

  it('writes a computed decimal as a string with IEEE754Compatible', async () => {
    const answer = await call(`${api}/Orders(${orders[0].Guid})?$compute=Total add 0.01 as Plus&$select=Plus`, { token, headers: { Accept: 'application/json;IEEE754Compatible=true' } })
    expect(answer.body.Plus).toBe(String((total(orders[0]) + 0.01).toFixed(2)))
  })

  it('gives a null argument the type of its parameter, in $compute and $orderby', async () => {
    const answer = await get('Orders?$compute=hour(null) as H,year(null) as Y&$select=H,Y,Number&$orderby=day(null),Number')
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.value.map((o: any) => [o.Number, o.H, o.Y])).toEqual(orders.map((o) => [o.Number, null, null]))
  })

  it.each([
    ['Orders?$compute=null as Z', 'null alone has no type'],
    ['Orders?$orderby=null', 'null alone has no type'],
    ['Orders?$compute=Total mul 2 as Number', 'already a name'],
    ['Orders?$compute=Total mul 2 as D&$apply=aggregate($count as N)', 'cannot be combined with $apply'],
    ['Orders?$compute=Nope mul 2 as D', 'Nope'],
    ['Orders?$compute=Customer as C', 'must be a value'],
    ['Orders?$select=Double', 'Double'],
  ])('refuses %s with 400', async (path, message) => {
    const answer = await get(path)
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toContain(message)
  })
})

function asNumber(value: unknown): number {
  return typeof value === 'string' ? Number(value) : (value as number)
}
