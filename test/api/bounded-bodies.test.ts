// A body's size in entities is bounded (issue #15): ApiOptions:MaxCollectionMembers per nested
// array and ApiOptions:MaxBodyEntities per body are checked before any entity is built, and an
// error answer lists at most 20 details and counts the rest, however many problems the body has.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string
let customer: string
let product: string

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
  customer = (await post('Customers', { Name: 'Bounded' })).body.Guid
  product = (await post('Products', { Code: 'B1', Name: 'Widget', Price: 2 })).body.Guid
})
afterAll(async () => server?.stop())

function post(path: string, body: unknown) {
  return call(`${api}/${path}`, { method: 'POST', token, body })
}

const ordersNumbered = async (number: number) => (await call(`${api}/Orders/$count?$filter=Number eq ${number}`, { token })).text

describe('entities per body', () => {
  it('answers a 200,000-member collection with one short 400 naming the limit, and goes on serving', async () => {
    const body = JSON.stringify({ Number: 5001, 'Customer@odata.bind': `Customers(${customer})`, Lines: new Array(200_000).fill(1) })
    expect(body.length).toBeLessThan(1_048_576)
    const answer = await post('Orders', body)
    expect(answer.status).toBe(400)
    expect(answer.text.length).toBeLessThan(500)
    expect(answer.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'ApiOptions:MaxCollectionMembers' })
    expect(answer.body.error.message).toContain('500')
    expect(answer.body.error.message).toContain('200000')
    expect(await ordersNumbered(5001)).toBe('0')
    expect((await call(`${api}/Customers(${customer})?$select=Name`, { token })).body.Name).toBe('Bounded')
  })

  it('bounds bound members the same way', async () => {
    const answer = await post('Orders', { Number: 5002, 'Customer@odata.bind': `Customers(${customer})`, 'Lines@odata.bind': new Array(20_000).fill('x') })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'ApiOptions:MaxCollectionMembers' })
  })

  it('counts nested entities at every depth against ApiOptions:MaxBodyEntities', async () => {
    const orders = Array.from({ length: 400 }, (_, i) => ({ Number: 6000 + i, Lines: [{}, {}, {}] }))
    const answer = await post('Customers', { Name: 'Deep', Orders: orders })
    expect(answer.status).toBe(400)
    expect(answer.text.length).toBeLessThan(500)
    expect(answer.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'ApiOptions:MaxBodyEntities' })
    expect(answer.body.error.message).toContain('1000')
    expect((await call(`${api}/Customers/$count?$filter=Name eq 'Deep'`, { token })).text).toBe('0')
  })

  it('accepts a deep insert at the collection limit', async () => {
    const lines = Array.from({ length: 500 }, () => ({ 'Product@odata.bind': `Products(${product})`, Quantity: 1 }))
    const answer = await post('Orders?$select=Total', { Number: 5003, 'Customer@odata.bind': `Customers(${customer})`, Lines: lines })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.Total).toBe(1000)
  })

  it('reports members of a nested collection that are not objects once, not once per member', async () => {
    const answer = await post('Orders', { Number: 5004, 'Customer@odata.bind': `Customers(${customer})`, Lines: [1, 'two', null, { Quantity: 1 }] })
    expect(answer.status).toBe(400)
    expect(answer.body.error.code).toBe('ValidationFailed')
    expect(answer.body.error.details).toEqual([{ code: 'ValidationFailed', target: 'Lines', message: expect.stringContaining('3 members') }])
  })
})

describe('error details', () => {
  it('lists the first 20 details and counts the rest', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`Colour${i}`, 'red']))
    const answer = await post('Products', { Code: 'B2', Name: 'Gadget', Price: 1, ...unknown })
    expect(answer.status).toBe(400)
    expect(answer.body.error.code).toBe('ValidationFailed')
    expect(answer.body.error.details).toHaveLength(20)
    expect(answer.body.error.details[0]).toMatchObject({ target: 'Colour0' })
    expect(answer.body.error['@entityctl.omittedDetails']).toBe(80)
    expect(answer.body.error.message).toContain('and 80 more')
    expect(answer.text.length).toBeLessThan(5000)
  })

  it('caps the details of the business rules too', async () => {
    const lines = Array.from({ length: 300 }, () => ({ 'Product@odata.bind': `Products(${product})`, Quantity: 11 }))
    const answer = await post('Orders', { Number: 5005, 'Customer@odata.bind': `Customers(${customer})`, Lines: lines })
    expect(answer.status).toBe(400)
    expect(answer.body.error.details).toHaveLength(20)
    expect(answer.body.error['@entityctl.omittedDetails']).toBe(280)
    expect(await ordersNumbered(5005)).toBe('0')
  })

  it('shortens a detail that quotes a long value', async () => {
    const answer = await post('Orders', { Number: 5006, 'Customer@odata.bind': 'x'.repeat(100_000) })
    expect(answer.status).toBe(400)
    expect(answer.text.length).toBeLessThan(5000)
    expect(answer.body.error.details[0].message).toMatch(/more characters/)
  })
})

describe('nesting of a body', () => {
  // 5,000 levels in about 10 KB: the binding, the rules and JSON.stringify recurse, and each
  // overflowed its stack (a 500) before the body reader refused such nesting.
  const nested = (levels: number) => '['.repeat(levels) + '1' + ']'.repeat(levels)

  it.each([
    ['a property of a create', 'Customers', (deep: string) => `{"Name":${deep}}`],
    ['a bind', 'Orders', (deep: string) => `{"Number":5010,"Customer@odata.bind":${deep}}`],
    ['an action parameter', 'Products/Reprice', (deep: string) => `{"category":${deep},"percent":1}`],
    ['a part of a JSON $batch', '$batch', (deep: string) => `{"requests":[{"id":"1","method":"POST","url":"Customers","body":{"Name":${deep}}}]}`],
  ])('refuses %s nested 5,000 levels deep with a 400, writing nothing', async (_, path, body) => {
    const answer = await post(path, body(nested(5000)))
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: 'InvalidRequest', message: expect.stringContaining('deeper than 100 levels') })
    expect((await call(`${api}/Customers/$count`, { token })).text).toBe('1')
  })

  it('refuses a multipart $batch part nested too deep the same way', async () => {
    const part = ['--b', 'Content-Type: application/http', '', 'POST Customers HTTP/1.1', 'Content-Type: application/json', '', `{"Name":${nested(5000)}}`, '--b--', ''].join('\r\n')
    const answer = await call(`${api}/$batch`, { method: 'POST', token, body: part, headers: { 'Content-Type': 'multipart/mixed; boundary=b' } })
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toContain('deeper than 100 levels')
  })

  it('reads a body at the limit up to its binding, which refuses the value for what it is', async () => {
    const answer = await post('Customers', `{"Name":${nested(99)}}`)
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).not.toContain('deeper than')
  })
})
