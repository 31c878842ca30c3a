// Writes the way generated clients and SAPUI5 send them (issue #17): a child created through its
// parent's collection (POST Customers(k)/Orders), and the new ETag on every answer that changes
// an entity without returning it (PATCH/PUT 204, return=minimal, an action's 204), so the
// client's next If-Match holds.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
})
afterAll(async () => server?.stop())

const send = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(`${server.api}/${path}`, { method, token, body, headers })

async function customer(name: string): Promise<string> {
  const created = await send('POST', 'Customers', { Name: name })
  expect(created.status).toBe(200)
  return created.body.Guid
}

describe('POST to a collection-valued navigation', () => {
  it('creates the child bound to its parent', async () => {
    const key = await customer('Parent One')
    const created = await send('POST', `Customers(${key})/Orders?$select=Number&$expand=Customer($select=Name)`, { Number: 8001 })
    expect(created.status, created.text).toBe(200)
    expect(created.body).toMatchObject({ Number: 8001, Customer: { Guid: key, Name: 'Parent One' } })
    expect(created.headers.get('location')).toContain(`/api/Orders(${created.body.Guid})`)
    const listed = await send('GET', `Customers(${key})/Orders?$select=Number`)
    expect(listed.body.value.map((o: any) => o.Number)).toEqual([8001])
  })

  it('answers 404 when the parent does not exist, and creates nothing', async () => {
    const missing = '00000000-0000-4000-8000-00000000abcd'
    const created = await send('POST', `Customers(${missing})/Orders`, { Number: 8002 })
    expect(created.status).toBe(404)
    expect(created.body.error.message).toContain(missing)
    expect((await send('GET', 'Orders?$filter=Number eq 8002')).body.value).toEqual([])
  })

  it('refuses a body that binds the child to another parent', async () => {
    const [a, b] = [await customer('Parent A'), await customer('Parent B')]
    const created = await send('POST', `Customers(${a})/Orders`, { Number: 8003, 'Customer@odata.bind': `Customers(${b})` })
    expect(created.status).toBe(400)
    expect(created.body.error.target).toBe('Customer')
    const same = await send('POST', `Customers(${a})/Orders`, { Number: 8004, 'Customer@odata.bind': `Customers(${a})` })
    expect(same.status).toBe(200)
  })

  it('answers return=minimal with 204, Location and the ETag', async () => {
    const key = await customer('Parent Minimal')
    const created = await send('POST', `Customers(${key})/Orders`, { Number: 8005 }, { Prefer: 'return=minimal' })
    expect(created.status).toBe(204)
    expect(created.headers.get('etag')).toMatch(etagAt(1))
    expect(created.headers.get('location')).toMatch(/\/api\/Orders\([0-9a-f-]{36}\)$/)
  })

  it('still allows only GET on a reference navigation and on $count', async () => {
    const key = await customer('Parent Count')
    expect((await send('POST', `Customers(${key})/Orders/$count`, { Number: 1 })).status).toBe(405)
  })
})

describe('the new ETag on answers without the entity', () => {
  it('PATCH and PUT 204 carry the new ETag, which the next If-Match uses', async () => {
    const key = await customer('Etag Chain')
    const created = (await send('GET', `Customers(${key})`)).headers.get('etag')!
    const patched = await send('PATCH', `Customers(${key})`, { City: 'Oslo' }, { 'If-Match': created })
    expect(patched.status).toBe(204)
    expect(patched.headers.get('etag')).toMatch(etagAt(2))
    const put = await send('PUT', `Customers(${key})`, { Name: 'Etag Chain', City: 'Bergen' }, { 'If-Match': patched.headers.get('etag')! })
    expect(put.status).toBe(204)
    expect(put.headers.get('etag')).toMatch(etagAt(3))
    const read = await send('GET', `Customers(${key})`)
    expect(read.headers.get('etag')).toBe(put.headers.get('etag'))
    expect((await send('DELETE', `Customers(${key})`, undefined, { 'If-Match': put.headers.get('etag')! })).status).toBe(204)
  })

  it('a failed PATCH carries no ETag', async () => {
    const key = await customer('Etag Refused')
    const refused = await send('PATCH', `Customers(${key})`, { City: 'Oslo' }, { 'If-Match': 'W/"7"' })
    expect(refused.status).toBe(412)
    expect(refused.headers.get('etag')).toBeNull()
  })

  it("an action's 204 carries its binding entity's new ETag", async () => {
    const key = await customer('Action Etag')
    const order = await send('POST', `Customers(${key})/Orders`, { Number: 8010 })
    const before = (await send('GET', `Orders(${order.body.Guid})`)).headers.get('etag')
    const closed = await send('POST', `Orders(${order.body.Guid})/Close`, {}, { 'If-Match': before! })
    expect(closed.status, closed.text).toBe(204)
    const after = (await send('GET', `Orders(${order.body.Guid})`)).headers.get('etag')
    expect(after).not.toBe(before)
    expect(closed.headers.get('etag')).toBe(after)
  })
})
