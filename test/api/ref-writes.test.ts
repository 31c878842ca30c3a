// Links set and removed through $ref (issue #17): PUT and DELETE on a single-valued navigation's
// $ref, POST and DELETE (?$id=) on a collection's, each an update of the entity holding the
// reference, needing what a PATCH of it needs; checked by reading the data back.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1', fullAccess: false }

let server: TestServer
let admin: string
let clerk: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins', import.meta.url)), users: [ADMIN, CLERK] })
  admin = await server.token()
  clerk = await server.token(undefined, CLERK.username, CLERK.password)
})
afterAll(async () => server?.stop())

const send = (method: string, path: string, body?: unknown, headers?: Record<string, string>, token = admin) => call(`${server.api}/${path}`, { method, token, body, headers })

async function created(set: string, body: unknown): Promise<string> {
  const answer = await send('POST', set, body)
  expect(answer.status, answer.text).toBe(200)
  return answer.body.Guid
}

async function customerOf(order: string): Promise<string | null> {
  const read = await send('GET', `Orders(${order})?$select=Number&$expand=Customer($select=Guid)`)
  expect(read.status).toBe(200)
  return read.body.Customer?.Guid ?? null
}

describe('$ref on a single-valued navigation', () => {
  it('PUT sets the link, to an entity given by its id or its URL', async () => {
    const [a, b] = [await created('Customers', { Name: 'Ref A' }), await created('Customers', { Name: 'Ref B' })]
    const order = await created('Orders', { Number: 9001, 'Customer@odata.bind': `Customers(${a})` })
    const put = await send('PUT', `Orders(${order})/Customer/$ref`, { '@odata.id': `${server.api}/Customers(${b})` })
    expect(put.status, put.text).toBe(204)
    expect(await customerOf(order)).toBe(b)
    expect((await send('PUT', `Orders(${order})/Customer/$ref`, { '@odata.id': `Customers(${a})` })).status).toBe(204)
    expect(await customerOf(order)).toBe(a)
  })

  it('PUT to an entity that does not exist is 404, and a body without @odata.id 400; nothing changes', async () => {
    const a = await created('Customers', { Name: 'Ref Kept' })
    const order = await created('Orders', { Number: 9002, 'Customer@odata.bind': `Customers(${a})` })
    expect((await send('PUT', `Orders(${order})/Customer/$ref`, { '@odata.id': 'Customers(00000000-0000-4000-8000-000000000001)' })).status).toBe(404)
    const bad = await send('PUT', `Orders(${order})/Customer/$ref`, { Guid: a })
    expect(bad.status).toBe(400)
    expect(bad.body.error.target).toBe('@odata.id')
    expect(await customerOf(order)).toBe(a)
  })

  it('DELETE removes the link; a required one is refused by validation', async () => {
    const product = await created('Products', { Code: 'REF-1', Name: 'Ref product', Price: 1 })
    const customer = await created('Customers', { Name: 'Ref Required' })
    const order = await created('Orders', { Number: 9003, 'Customer@odata.bind': `Customers(${customer})`, Lines: [{ 'Product@odata.bind': `Products(${product})`, Quantity: 1 }] })
    const removed = await send('DELETE', `Orders(${order})/Customer/$ref`)
    expect(removed.status).toBe(400)
    expect(await customerOf(order)).toBe(customer)
  })

  it('needs the update permission on the entity holding the reference', async () => {
    const [a, b] = [await created('Customers', { Name: 'Ref Perm A' }), await created('Customers', { Name: 'Ref Perm B' })]
    const order = await created('Orders', { Number: 9004, 'Customer@odata.bind': `Customers(${a})` })
    const refused = await send('PUT', `Orders(${order})/Customer/$ref`, { '@odata.id': `Customers(${b})` }, {}, clerk)
    expect(refused.status).toBe(403)
    expect(refused.body.error.message).toContain('update permission on Order')
    expect(await customerOf(order)).toBe(a)
  })
})

describe('$ref on a collection-valued navigation', () => {
  it('POST adds a member (moving it from its parent), DELETE ?$id= removes one that is linked', async () => {
    const [a, b] = [await created('Customers', { Name: 'Coll A' }), await created('Customers', { Name: 'Coll B' })]
    const order = await created('Orders', { Number: 9011, 'Customer@odata.bind': `Customers(${a})` })
    const added = await send('POST', `Customers(${b})/Orders/$ref`, { '@odata.id': `Orders(${order})` })
    expect(added.status, added.text).toBe(204)
    expect(await customerOf(order)).toBe(b)
    const members = await send('GET', `Customers(${b})/Orders?$select=Number`)
    expect(members.body.value.map((o: any) => o.Number)).toEqual([9011])
    // Not linked to a: 404, and nothing moves.
    expect((await send('DELETE', `Customers(${a})/Orders/$ref?$id=Orders(${order})`)).status).toBe(404)
    expect(await customerOf(order)).toBe(b)
    expect((await send('DELETE', `Customers(${b})/Orders/$ref`)).status).toBe(400)
  })

  it('POST with a parent that does not exist is 404', async () => {
    const a = await created('Customers', { Name: 'Coll Missing' })
    const order = await created('Orders', { Number: 9012, 'Customer@odata.bind': `Customers(${a})` })
    expect((await send('POST', `Customers(00000000-0000-4000-8000-000000000002)/Orders/$ref`, { '@odata.id': `Orders(${order})` })).status).toBe(404)
    expect(await customerOf(order)).toBe(a)
  })

  it('DELETE ?$id= clears an optional reference; DELETE on a single-valued one too', async () => {
    const shelf = await created('Shelfs', { Name: 'Top' })
    const tally = await created('Tallies', { Count: 1 })
    expect((await send('POST', `Shelfs(${shelf})/Tallies/$ref`, { '@odata.id': `Tallies(${tally})` })).status).toBe(204)
    const shelved = async () => (await send('GET', `Tallies(${tally})?$expand=Shelf($select=Guid)`)).body.Shelf?.Guid ?? null
    expect(await shelved()).toBe(shelf)
    expect((await send('DELETE', `Shelfs(${shelf})/Tallies/$ref?$id=${encodeURIComponent(`${server.api}/Tallies(${tally})`)}`)).status).toBe(204)
    expect(await shelved()).toBeNull()
    expect((await send('PUT', `Tallies(${tally})/Shelf/$ref`, { '@odata.id': `Shelfs(${shelf})` })).status).toBe(204)
    expect(await shelved()).toBe(shelf)
    expect((await send('DELETE', `Tallies(${tally})/Shelf/$ref`)).status).toBe(204)
    expect(await shelved()).toBeNull()
  })

  it('DELETE on a member\'s $ref by its key (OData 4.01) removes that link, as ?$id= does', async () => {
    const shelf = await created('Shelfs', { Name: 'Middle' })
    const tally = await created('Tallies', { Count: 2 })
    expect((await send('POST', `Shelfs(${shelf})/Tallies/$ref`, { '@odata.id': `Tallies(${tally})` })).status).toBe(204)
    const shelved = async () => (await send('GET', `Tallies(${tally})?$expand=Shelf($select=Guid)`)).body.Shelf?.Guid ?? null
    expect((await send('PUT', `Shelfs(${shelf})/Tallies(${tally})/$ref`, { '@odata.id': `Tallies(${tally})` })).status).toBe(405)
    expect((await send('DELETE', `Shelfs(${shelf})/Tallies(${tally})/$ref`)).status).toBe(204)
    expect(await shelved()).toBeNull()
    expect((await send('DELETE', `Shelfs(${shelf})/Tallies(${tally})/$ref`)).status).toBe(404)
  })

})

describe('entity references written the OData 4.01 way, {"@id": …}', () => {
  const V401 = { 'OData-Version': '4.01' }

  it('bind a reference and collection members on create, and a reference on update, as @odata.bind does', async () => {
    const [a, b] = [await created('Customers', { Name: 'At A' }), await created('Customers', { Name: 'At B' })]
    const order = await send('POST', 'Orders', { Number: 9021, Customer: { '@id': `Customers(${a})` } }, V401)
    expect(order.status, order.text).toBe(200)
    expect(await customerOf(order.body.Guid)).toBe(a)
    const patched = await send('PATCH', `Orders(${order.body.Guid})`, { Customer: { '@odata.id': `${server.api}/Customers(${b})` } })
    expect(patched.status, patched.text).toBe(204)
    expect(await customerOf(order.body.Guid)).toBe(b)
    const other = await created('Orders', { Number: 9022, 'Customer@odata.bind': `Customers(${a})` })
    const customer = await send('POST', 'Customers?$expand=Orders($select=Number)', { Name: 'At C', Orders: [{ '@id': `Orders(${other})` }, { Number: 9023 }] }, V401)
    expect(customer.status, customer.text).toBe(200)
    expect(customer.body.Orders.map((o: { Number: number }) => o.Number).sort()).toEqual([9022, 9023])
  })

  it('refuses a reference that would also change the entity it binds, naming it', async () => {
    const a = await created('Customers', { Name: 'At D' })
    const refused = await send('POST', 'Orders', { Number: 9024, Customer: { '@id': `Customers(${a})`, Name: 'Renamed' } }, V401)
    expect(refused.status).toBe(400)
    expect(refused.body.error.details[0].target).toBe('Customer')
    expect((await send('GET', `Customers(${a})?$select=Name`)).body.Name).toBe('At D')
  })

  it('set a link through $ref', async () => {
    const [a, b] = [await created('Customers', { Name: 'At E' }), await created('Customers', { Name: 'At F' })]
    const order = await created('Orders', { Number: 9025, 'Customer@odata.bind': `Customers(${a})` })
    const put = await send('PUT', `Orders(${order})/Customer/$ref`, { '@id': `Customers(${b})` }, V401)
    expect(put.status, put.text).toBe(204)
    expect(await customerOf(order)).toBe(b)
  })
})
