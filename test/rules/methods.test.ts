// Plugin methods as OData functions and actions (specification 4.3): the four kinds, their
// routes, parameter rules, results through the query pipeline, read-only enforcement.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string
const orders: Record<string, any> = {}
let customer: any

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
  customer = (await post('Customers', { Name: 'Method Customer' })).body
  const product = (await post('Products', { Code: 'M1', Name: 'Widget', Price: 10, Category: 'Tools' })).body
  await post('Products', { Code: 'M2', Name: 'Gadget', Price: 20, Category: 'Tools' })
  for (const [number, date, quantity] of [[1, '2024-01-10', 1], [2, '2024-03-01', 2], [3, '2025-01-01', 3]] as const) {
    orders[number] = (
      await post('Orders', { Number: number, OrderDate: date, 'Customer@odata.bind': `Customers(${customer.Guid})`, Lines: [{ Quantity: quantity, 'Product@odata.bind': `Products(${product.Guid})` }] })
    ).body
  }
})
afterAll(async () => server?.stop())

function post(path: string, body?: unknown) {
  return call(`${api}/${path}`, { method: 'POST', token, body })
}

describe('instance modify (action)', () => {
  it('POST Orders(key)/Close changes the order through the rules and answers 204', async () => {
    const response = await post(`Orders(${orders[3].Guid})/Close`)
    expect(response.status).toBe(204)
    expect((await call(`${api}/Orders(${orders[3].Guid})?$select=Status`, { token })).body.Status).toBe('Closed')
  })

  it('is an action: GET is 405', async () => {
    expect((await call(`${api}/Orders(${orders[1].Guid})/Close`, { token })).status).toBe(405)
  })

  it('also answers to the namespace-qualified name', async () => {
    expect((await post(`Orders(${orders[2].Guid})/entityctl.Close`)).status).toBe(204)
    await call(`${api}/Orders(${orders[2].Guid})`, { method: 'PATCH', token, body: { Status: 'Open' } })
  })
})

describe('static read (function) returning entities', () => {
  it('takes its parameter in parentheses or in the query string, and accepts $select/$filter/$orderby/$count', async () => {
    const inline = await call(`${api}/Orders/OpenSince(before=2024-12-31)?$select=Number&$orderby=Number desc&$count=true`, { token })
    expect(inline.status).toBe(200)
    expect(inline.body['@odata.count']).toBe(2)
    expect(inline.body.value.map((o: any) => o.Number)).toEqual([2, 1])
    const query = await call(`${api}/Orders/OpenSince?before=2024-02-01&$select=Number,Total`, { token })
    expect(query.body.value).toEqual([expect.objectContaining({ Number: 1, Total: 10 })])
    const filtered = await call(`${api}/Orders/OpenSince(before=2030-01-01)?$filter=Number gt 1&$select=Number&$expand=Lines($select=Quantity)`, { token })
    expect(filtered.body.value).toEqual([expect.objectContaining({ Number: 2, Lines: [expect.objectContaining({ Quantity: 2 })] })])
  })

  it('answers 400 naming a missing required parameter, or one of the wrong type', async () => {
    const missing = await call(`${api}/Orders/OpenSince()`, { token })
    expect(missing.status).toBe(400)
    expect(missing.body.error).toMatchObject({ code: 'MissingParameter', target: 'before' })
    const wrong = await call(`${api}/Orders/OpenSince(before=12)`, { token })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.target).toBe('before')
  })

  it('takes a parameter alias in parentheses, its value in the query string (URL Conventions 5.1.3)', async () => {
    const aliased = await call(`${api}/Orders/OpenSince(before=@b)?@b=2024-06-01&$select=Number&$orderby=Number`, { token })
    expect(aliased.status, aliased.text).toBe(200)
    expect(aliased.body.value.map((o: any) => o.Number)).toEqual([1, 2])
    const unset = await call(`${api}/Orders/OpenSince(before=@b)`, { token })
    // An alias given no value is null (URL Conventions 5.1.3), which a required parameter refuses.
    expect(unset.body.error).toMatchObject({ code: 'InvalidParameter', target: 'before', message: "The parameter 'before' cannot be null." })
  })

  it('answers 400 InvalidParameter for a parameter the function does not declare', async () => {
    const extra = await call(`${api}/Orders/OpenSince(before=2027-01-01,extra=1)`, { token })
    expect(extra.status).toBe(400)
    expect(extra.body.error).toMatchObject({ code: 'InvalidParameter', target: 'extra' })
    const none = await call(`${api}/Customers(${customer.Guid})/Revenue(x=1)`, { token })
    expect(none.status).toBe(400)
    expect(none.body.error).toMatchObject({ code: 'InvalidParameter', target: 'x' })
  })
})

describe('instance read (function) returning a scalar', () => {
  it('GET Customers(key)/Revenue() answers the value', async () => {
    const response = await call(`${api}/Customers(${customer.Guid})/Revenue()`, { token })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ value: 60 })
    expect(response.body['@odata.context']).toContain('$metadata#Edm.Decimal')
  })
})

describe('static modify (action) with parameters', () => {
  it('POST Products/Reprice changes prices through the rules and commits them', async () => {
    const response = await post('Products/Reprice', { category: 'Tools', percent: 10 })
    expect(response.status).toBe(200)
    expect(response.body.value).toBe(2)
    const prices = await call(`${api}/Products?$select=Code,Price&$orderby=Code`, { token })
    expect(prices.body.value.map((p: any) => p.Price)).toEqual([11, 22])
  })

  it('answers 400 for a missing parameter and for an unknown one', async () => {
    expect((await post('Products/Reprice', { category: 'Tools' })).body.error).toMatchObject({ code: 'MissingParameter', target: 'percent' })
    expect((await post('Products/Reprice', { category: 'Tools', percent: 1, extra: 1 })).body.error).toMatchObject({ code: 'InvalidParameter', target: 'extra' })
  })
})

describe('unknown methods', () => {
  it('answer 404 with the methods that exist', async () => {
    const response = await call(`${api}/Orders/OpenSinse()`, { token })
    expect(response.status).toBe(404)
    expect(response.body.error.message).toContain("did you mean 'OpenSince'")
  })
})
