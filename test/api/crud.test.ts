// Entity CRUD over real HTTP on the demo plugin: every demo entity, the status codes and
// OData error bodies of decisions.md, ETags, PUT, deep insert, aliases and key forms.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
})
afterAll(async () => server?.stop())

const post = (path: string, body: unknown, headers?: Record<string, string>) => call(`${api}/${path}`, { method: 'POST', token, body, headers })
const get = (path: string, headers?: Record<string, string>) => call(`${api}/${path}`, { token, headers })

async function customer(name = 'Ada Lovelace', extra: Record<string, unknown> = {}) {
  const response = await post('Customers?$select=*', { Name: name, Country: 'gb', ...extra })
  expect(response.status).toBe(200)
  return response.body
}

async function product(code: string, price: number) {
  const response = await post('Products?$select=*', { Code: code, Name: `Product ${code}`, Price: price })
  expect(response.status).toBe(200)
  return response.body
}

describe('create', () => {
  it('answers 200 with @odata.context, Guid and an etag, and only Guid without $select', async () => {
    const response = await post('Customers', { Name: 'Grace Hopper' })
    expect(response.status).toBe(200)
    // The context URL names the default projection, as the read of the entity does (OData 4.01 §10).
    expect(response.body['@odata.context']).toMatch(/\/api\/\$metadata#Customers\(Guid\)\/\$entity$/)
    expect(Object.keys(response.body).filter((k) => !k.startsWith('@'))).toEqual(['Guid'])
    expect(response.headers.get('etag')).toMatch(etagAt(1))
    expect(response.headers.get('location')).toContain(`Customers(${response.body.Guid})`)
  })

  it('keeps a client Guid and generates a time-ordered one otherwise', async () => {
    const guid = 'b2c645f7-3a9e-46a7-86b7-ad07b2cd48e8'
    expect((await post('Customers', { Guid: guid, Name: 'Keyed' })).body.Guid).toBe(guid)
    const generated = (await post('Customers', { Name: 'Generated' })).body.Guid
    expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('returns what $select asks, with corrections and computed values applied', async () => {
    const body = await customer('Alan Turing', { Country: ' de ' })
    expect(body).toMatchObject({ Name: 'Alan Turing', Country: 'DE', Title: 'Alan Turing' })
  })

  it('deep-inserts an order with lines in one transaction, with totals from the rules', async () => {
    const c = await customer()
    const [p1, p2, p3] = [await product('W1A', 12.99), await product('W1B', 63.78), await product('W1C', 3.57)]
    const response = await post('Orders?$select=Total,Title,Status&$expand=Lines($select=Quantity,UnitPrice,LineTotal,Title;$orderby=Quantity)', {
      Number: 1000000001,
      'Customer@odata.bind': `Customers(${c.Guid})`,
      OrderDate: '2026-01-15',
      Lines: [
        { 'Product@odata.bind': `Products(${p1.Guid})`, Quantity: 2 },
        { 'Product@odata.bind': `Products(${p2.Guid})`, Quantity: 3 },
        { 'Product@odata.bind': `Products(${p3.Guid})`, Quantity: 5 },
      ],
    })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ Total: 235.17, Title: 'Order 1000000001', Status: 'Open' })
    expect(response.body.Lines.map((l: any) => [l.Quantity, l.UnitPrice, l.LineTotal, l.Title])).toEqual([
      [2, 12.99, 25.98, 'Order 1000000001 / W1A'],
      [3, 63.78, 191.34, 'Order 1000000001 / W1B'],
      [5, 3.57, 17.85, 'Order 1000000001 / W1C'],
    ])
  })

  it('commits nothing of a deep insert whose one line fails validation', async () => {
    const c = await customer()
    const p = await product('ROLLBACK', 1)
    const response = await post('Orders', {
      Number: 4242,
      'Customer@odata.bind': `Customers(${c.Guid})`,
      Lines: [{ 'Product@odata.bind': `Products(${p.Guid})`, Quantity: 2 }, { 'Product@odata.bind': `Products(${p.Guid})`, Quantity: 11 }],
    })
    expect(response.status).toBe(400)
    expect(response.body.error.code).toBe('ValidationFailed')
    // The target names the line as the body wrote it, as the binder's errors do.
    expect(response.body.error.details).toEqual([expect.objectContaining({ target: 'Lines/1/Quantity', message: expect.stringContaining('at most 10') })])
    expect((await get('Orders/$count?$filter=Number eq 4242')).text).toBe('0')
  })

  it('refuses a deep insert that gives two lines one Guid, and writes nothing', async () => {
    const c = await customer()
    const p = await product('TWICE', 4.5)
    const guid = '01a22040-0000-7000-8000-000000000001'
    const line = (Quantity: number) => ({ Guid: guid, 'Product@odata.bind': `Products(${p.Guid})`, Quantity })
    const response = await post('Orders', { Number: 4403, 'Customer@odata.bind': `Customers(${c.Guid})`, Lines: [line(2), line(3)] })
    expect(response.status).toBe(400)
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'ValidationFailed', target: 'Lines/1/Guid' })])
    expect((await get('Orders/$count?$filter=Number eq 4403')).text).toBe('0')
    expect((await get(`OrderLines(${guid})`)).status).toBe(404)
  })

  it('refuses a deep-inserted line that names another order than its parent, and writes nothing', async () => {
    const c = await customer()
    const p = await product('ELSEWHERE', 1)
    const other = (await post('Orders', { Number: 8100, 'Customer@odata.bind': `Customers(${c.Guid})` })).body.Guid
    const line = { 'Product@odata.bind': `Products(${p.Guid})`, Quantity: 1 }
    for (const [number, elsewhere] of [
      [8101, { Order: { Number: 8102, 'Customer@odata.bind': `Customers(${c.Guid})` } }],
      [8103, { 'Order@odata.bind': `Orders(${other})` }],
    ] as const) {
      const response = await post('Orders', { Number: number, 'Customer@odata.bind': `Customers(${c.Guid})`, Lines: [{ ...line, ...elsewhere }] })
      expect(response.status).toBe(400)
      expect(response.body.error.details).toEqual([expect.objectContaining({ target: 'Lines/0/Order' })])
    }
    expect((await get('Orders/$count?$filter=Number ge 8101 and Number le 8103')).text).toBe('0')
    expect((await get(`Orders(${other})/Lines/$count`)).text).toBe('0')
  })

  it('refuses an @odata.type that is not the set\'s entity type, and a bind to another service', async () => {
    for (const type of ['#entityctl.Order', '#Foo.Bar']) {
      const response = await post('Products', { '@odata.type': type, Code: 'TYPED', Name: 'Typed', Price: 1 })
      expect(response.status, type).toBe(400)
      expect(response.body.error.details).toEqual([expect.objectContaining({ target: '@odata.type' })])
    }
    expect((await post('Products', { '@odata.type': '#entityctl.Product', Code: 'TYPED', Name: 'Typed', Price: 1 })).status).toBe(200)
    const c = await customer()
    const elsewhere = await post('Orders', { Number: 8200, 'Customer@odata.bind': `http://evil.example/api/Customers(${c.Guid})` })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body.error.details).toEqual([expect.objectContaining({ target: 'Customer@odata.bind' })])
    expect((await post('Orders', { Number: 8201, 'Customer@odata.bind': `${api}/Customers(${c.Guid})` })).status).toBe(200)
  })

  it('answers 204 with OData-EntityId for Prefer: return=minimal', async () => {
    const response = await post('Customers', { Name: 'Minimal' }, { Prefer: 'return=minimal' })
    expect(response.status).toBe(204)
    expect(response.headers.get('odata-entityid')).toMatch(/Customers\([0-9a-f-]{36}\)$/)
  })

  it('refuses a duplicate natural key with 409', async () => {
    await product('DUP', 1)
    const response = await post('Products', { Code: 'dup', Name: 'Again', Price: 2 })
    expect(response.status).toBe(409)
    expect(response.body.error).toMatchObject({ code: 'Conflict', message: expect.stringContaining('Code') })
  })

  it('refuses a bare value for a navigation to one, naming the navigation and the ways to bind it', async () => {
    const ada = await customer('Ada Bare')
    for (const [method, path] of [['POST', 'Orders'], ['PATCH', `Orders(${(await post('Orders', { Number: 77001, CustomerGuid: ada.Guid })).body.Guid})`]]) {
      const response = await call(`${api}/${path}`, { method, token, body: { Number: 77002, Customer: ada.Guid } })
      expect(response.status, `${method}: ${response.text}`).toBe(400)
      expect(response.body.error.details, method).toEqual([{
        code: 'ValidationFailed',
        target: 'Customer',
        message: 'Customer is a navigation to one Customer: bind it with "Customer@odata.bind": "Customers(<Guid>)", "CustomerGuid": "<Guid>" or "Customer": {"@id": "Customers(<Guid>)"}, not a bare value.',
      }])
    }
  })

  it('reports every invalid property at once', async () => {
    const response = await post('Products', { Code: 'X'.repeat(21), Price: 'cheap', Colour: 'red' })
    expect(response.status).toBe(400)
    const targets = response.body.error.details.map((d: any) => d.target).sort()
    expect(targets).toEqual(['Colour', 'Price'])
  })
})

describe('read', () => {
  it('reads by key in parentheses, as a segment, and through the singular alias', async () => {
    const c = await customer('Key Forms')
    for (const path of [`Customers(${c.Guid})`, `Customers/${c.Guid}`, `Customer(${c.Guid})`, `Customers(Guid=${c.Guid})`]) {
      const response = await get(`${path}?$select=Name`)
      expect(response.status, path).toBe(200)
      expect(response.body.Name).toBe('Key Forms')
      expect(response.body['@odata.context']).toContain('#Customers(Name)/$entity')
    }
  })

  it('answers 404 for an unknown key and an unknown set, with a hint', async () => {
    expect((await get('Customers(00000000-0000-4000-8000-000000000000)')).status).toBe(404)
    const response = await get('Customer5')
    expect(response.status).toBe(404)
    expect(response.body.error).toMatchObject({ code: 'NotFound', message: expect.stringContaining("did you mean 'Customers'") })
  })

  it('returns every structural property for $select=*', async () => {
    const c = await customer('Star', { City: 'Paris', CreditLimit: 5000 })
    const response = await get(`Customers(${c.Guid})?$select=*`)
    expect(response.body).toMatchObject({ Name: 'Star', City: 'Paris', CreditLimit: 5000, Country: 'GB', Title: 'Star' })
  })

  it('serves the service document with canonical set names', async () => {
    const response = await get('')
    expect(response.status).toBe(200)
    expect(response.body.value.map((s: any) => s.name)).toEqual(expect.arrayContaining(['Customers', 'Orders', 'OrderLines', 'Products', 'Roles']))
  })

  it('serves it at the service root written without its slash, as clients are given it (/api)', async () => {
    const response = await call(api, { token })
    expect(response.status).toBe(200)
    expect(response.body['@odata.context']).toBe(`${api}/$metadata`)
    expect((await call(api)).status).toBe(401)
    expect((await call(api, { method: 'POST', token, body: {} })).status).toBe(405)
    expect((await call(`${server.url}/apix`, { token })).status).toBe(404)
  })

  it('navigates from an entity to its collection and its reference', async () => {
    const c = await customer('Navigator')
    const p = await product('NAV', 10)
    const order = (await post('Orders', { Number: 777, 'Customer@odata.bind': `Customers(${c.Guid})`, Lines: [{ 'Product@odata.bind': `Products(${p.Guid})`, Quantity: 1 }] })).body
    expect((await get(`Customers(${c.Guid})/Orders?$select=Number`)).body.value).toEqual([expect.objectContaining({ Number: 777 })])
    expect((await get(`Orders(${order.Guid})/Customer?$select=Name`)).body.Name).toBe('Navigator')
    expect((await get(`Customers(${c.Guid})/Orders/$count`)).text).toBe('1')
  })
})

describe('update', () => {
  it('PATCH changes only the given properties and answers 204', async () => {
    const c = await customer('Patchy', { City: 'Rome' })
    const response = await call(`${api}/Customers(${c.Guid})`, { method: 'PATCH', token, body: { City: 'Milan' } })
    expect(response.status).toBe(204)
    expect((await get(`Customers(${c.Guid})?$select=Name,City`)).body).toMatchObject({ Name: 'Patchy', City: 'Milan' })
  })

  it('PATCH with $select answers 200 with the recomputed values', async () => {
    const c = await customer()
    const p = await product('PATCHSEL', 4)
    const order = (await post('Orders?$expand=Lines', { Number: 9001, 'Customer@odata.bind': `Customers(${c.Guid})`, Lines: [{ 'Product@odata.bind': `Products(${p.Guid})`, Quantity: 1 }] })).body
    const line = order.Lines[0].Guid
    const response = await call(`${api}/OrderLines(${line})?$select=LineTotal&$expand=Order($select=Total)`, { method: 'PATCH', token, body: { Quantity: 7 } })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ LineTotal: 28, Order: { Total: 28 } })
  })

  it('PUT replaces every updatable property', async () => {
    const c = await customer('Putty', { City: 'Oslo', Email: 'p@example.com' })
    const response = await call(`${api}/Customers(${c.Guid})?$select=Name,City,Email`, { method: 'PUT', token, body: { Name: 'Putty 2' } })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ Name: 'Putty 2', City: null, Email: null })
  })

  describe('computed properties are the rules\' alone: a client\'s value is ignored', () => {
    async function order(number: number) {
      const c = await customer()
      const p = await product(`TEA-${number}`, 4.5)
      const created = await post('Orders?$select=Total&$expand=Lines', { Number: number, 'Customer@odata.bind': `Customers(${c.Guid})`, Lines: [{ 'Product@odata.bind': `Products(${p.Guid})`, Quantity: 2 }] })
      expect(created.body.Total).toBe(9)
      return { customer: c.Guid as string, order: created.body.Guid as string, line: created.body.Lines[0].Guid as string }
    }
    const change = (method: string, path: string, body: unknown) => call(`${api}/${path}`, { method, token, body })

    it('PATCH of an order\'s Total and Title, and of a line\'s LineTotal', async () => {
      const { order: o, line } = await order(8300)
      expect((await change('PATCH', `Orders(${o})`, { Total: 1234.56, Title: 'hack' })).status).toBe(204)
      expect((await change('PATCH', `OrderLines(${line})`, { LineTotal: 999 })).status).toBe(204)
      const stored = await get(`Orders(${o})?$select=Total,Title&$expand=Lines($select=LineTotal,Title)`)
      expect(stored.body).toMatchObject({ Total: 9, Title: 'Order 8300', Lines: [{ LineTotal: 9, Title: 'Order 8300 / TEA-8300' }] })
    })

    it('PUT recomputes every computed property instead of resetting it, and ignores a value for one', async () => {
      const { customer: c, order: o, line } = await order(8301)
      const put = await change('PUT', `Orders(${o})?$select=Total,Title`, { Number: 8302, Total: 5, 'Customer@odata.bind': `Customers(${c})` })
      expect(put.status).toBe(200)
      expect(put.body).toMatchObject({ Total: 9, Title: 'Order 8302' })
      const products = await get(`OrderLines(${line})?$select=ProductGuid`)
      const putLine = await change('PUT', `OrderLines(${line})?$select=LineTotal,Title`, { Quantity: 3, UnitPrice: 4.5, LineTotal: 1, 'Order@odata.bind': `Orders(${o})`, ProductGuid: products.body.ProductGuid })
      expect(putLine.status).toBe(200)
      expect(putLine.body).toMatchObject({ LineTotal: 13.5, Title: 'Order 8302 / TEA-8301' })
      expect((await get(`Orders(${o})?$select=Total`)).body.Total).toBe(13.5)
    })
  })

  it('honours If-Match: 412 on a stale ETag, success on the current one', async () => {
    const c = await customer('Etag')
    const stale = await call(`${api}/Customers(${c.Guid})`, { method: 'PATCH', token, body: { City: 'A' }, headers: { 'If-Match': 'W/"7"' } })
    expect(stale.status).toBe(412)
    expect(stale.body.error.code).toBe('PreconditionFailed')
    const fresh = await call(`${api}/Customers(${c.Guid})`, { method: 'PATCH', token, body: { City: 'A' }, headers: { 'If-Match': c['@odata.etag'] } })
    expect(fresh.status).toBe(204)
    expect((await get(`Customers(${c.Guid})`)).headers.get('etag')).toMatch(etagAt(2))
  })

  it('refuses (412) the ETag of a deleted entity on PATCH, PUT and DELETE of the one created again with its key', async () => {
    const guid = crypto.randomUUID()
    const first = await post('Customers', { Guid: guid, Name: 'First of its key' })
    const seen = first.headers.get('etag')!
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      expect((await call(`${api}/Customers(${guid})`, { method: 'DELETE', token })).status).toBe(204)
      const again = await post('Customers', { Guid: guid, Name: 'Again' })
      expect(again.status).toBe(200)
      // The same version as the first: the version alone would have matched.
      expect(again.headers.get('etag')).toMatch(etagAt(1))
      expect(again.headers.get('etag')).not.toBe(seen)
      for (const tag of [seen, 'W/"1"']) {
        const stale = await call(`${api}/Customers(${guid})`, { method, token, body: method === 'DELETE' ? undefined : { Name: 'Lost update' }, headers: { 'If-Match': tag } })
        expect([stale.status, stale.body?.error?.code], `${method} ${tag}`).toEqual([412, 'PreconditionFailed'])
      }
      expect((await get(`Customers(${guid})?$select=Name`)).body.Name).toBe('Again')
      const current = await call(`${api}/Customers(${guid})`, { method: 'PATCH', token, body: { City: method }, headers: { 'If-Match': again.headers.get('etag')! } })
      expect(current.status).toBe(204)
    }
  })

  it('honours If-None-Match on PATCH, PUT and DELETE: 412 when it matches the ETag, or is * (the entity exists)', async () => {
    const c = await customer('None Match')
    const write = (method: string, ifNoneMatch: string) =>
      call(`${api}/Customers(${c.Guid})`, { method, token, body: method === 'DELETE' ? undefined : { Name: 'Changed' }, headers: { 'If-None-Match': ifNoneMatch } })
    const current = c['@odata.etag']
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      for (const tag of [current, '*', `"0", ${current}`]) {
        const refused = await write(method, tag)
        expect(refused.status, `${method} ${tag}`).toBe(412)
        expect(refused.body.error.code).toBe('PreconditionFailed')
      }
    }
    expect((await get(`Customers(${c.Guid})?$select=Name`)).body.Name).toBe('None Match')
    expect((await get(`Customers(${c.Guid})`)).headers.get('etag')).toBe(current)
    expect((await write('PATCH', 'W/"7"')).status).toBe(204)
  })

  it('takes an If-None-Match ETag from before ETags carried the xmin (W/"1") as the entity\'s when its version is: 412', async () => {
    const c = await customer('None Match Before')
    const write = (method: string, ifNoneMatch: string) =>
      call(`${api}/Customers(${c.Guid})`, { method, token, body: method === 'DELETE' ? undefined : { Name: 'Changed' }, headers: { 'If-None-Match': ifNoneMatch } })
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      for (const tag of ['W/"1"', '"1"', 'W/"7", W/"1"']) {
        const refused = await write(method, tag)
        expect([refused.status, refused.body?.error?.code], `${method} ${tag}`).toEqual([412, 'PreconditionFailed'])
      }
    }
    expect((await get(`Customers(${c.Guid})?$select=Name`)).body.Name).toBe('None Match Before')
    // Another version is another state: the write goes ahead. If-Match does not take such a tag (412 above).
    expect((await write('PATCH', 'W/"2"')).status).toBe(204)
  })

  it('Prefer: return=representation answers PATCH, PUT and POST with the whole entity, and says it applied', async () => {
    const c = await customer('Represented', { City: 'Rome' })
    const prefer = { Prefer: 'return=representation' }
    for (const method of ['PATCH', 'PUT']) {
      const response = await call(`${api}/Customers(${c.Guid})`, { method, token, body: { Name: 'Represented', City: method }, headers: prefer })
      expect(response.status, method).toBe(200)
      expect(response.headers.get('preference-applied')).toBe('return=representation')
      expect(response.body['@odata.context']).toMatch(/#Customers\/\$entity$/)
      expect(response.body).toMatchObject({ Guid: c.Guid, Name: 'Represented', City: method, Title: 'Represented' })
    }
    const created = await post('Customers', { Name: 'Posted', Country: 'fr' }, prefer)
    expect(created.status).toBe(200)
    expect(created.headers.get('preference-applied')).toBe('return=representation')
    expect(created.body).toMatchObject({ Name: 'Posted', Country: 'FR', Title: 'Posted' })
  })

  it('Prefer: return=minimal answers PATCH and PUT with 204, over $select, and says it applied', async () => {
    const c = await customer('Minimal', { City: 'Oslo' })
    for (const method of ['PATCH', 'PUT']) {
      const response = await call(`${api}/Customers(${c.Guid})?$select=Name`, { method, token, body: { Name: 'Minimal', City: method }, headers: { Prefer: 'return=minimal' } })
      expect([response.status, response.text], method).toEqual([204, ''])
      expect(response.headers.get('preference-applied')).toBe('return=minimal')
      expect(response.headers.get('etag')).toMatch(method === 'PATCH' ? etagAt(2) : etagAt(3))
    }
    expect((await get(`Customers(${c.Guid})?$select=City`)).body.City).toBe('PUT')
  })

  it('refuses to change the key', async () => {
    const c = await customer()
    const response = await call(`${api}/Customers(${c.Guid})`, { method: 'PATCH', token, body: { Guid: '00000000-0000-4000-8000-000000000001' } })
    expect(response.status).toBe(400)
  })
})

describe('delete', () => {
  it('answers 204, then 404', async () => {
    const c = await customer('Short-lived')
    expect((await call(`${api}/Customers(${c.Guid})`, { method: 'DELETE', token })).status).toBe(204)
    expect((await call(`${api}/Customers(${c.Guid})`, { method: 'DELETE', token })).status).toBe(404)
  })

  it('cascades from an order to its lines, and restrict keeps a customer with orders', async () => {
    const c = await customer('Cascade')
    const p = await product('CASCADE', 2)
    const order = (await post('Orders?$expand=Lines', { Number: 31337, 'Customer@odata.bind': `Customers(${c.Guid})`, Lines: [{ 'Product@odata.bind': `Products(${p.Guid})`, Quantity: 1 }] })).body
    const blocked = await call(`${api}/Customers(${c.Guid})`, { method: 'DELETE', token })
    expect(blocked.status).toBe(409)
    expect(blocked.body.error.message).toContain('Orders')
    expect((await call(`${api}/Orders(${order.Guid})`, { method: 'DELETE', token })).status).toBe(204)
    expect((await get(`OrderLines(${order.Lines[0].Guid})`)).status).toBe(404)
  })
})

describe('protocol errors', () => {
  it('requires authentication with 401 and WWW-Authenticate', async () => {
    const response = await call(`${api}/Customers`)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('Bearer')
    expect(response.body.error.code).toBe('Unauthorized')
  })

  it('answers 405 with Allow for a method a route does not take', async () => {
    const c = await customer()
    const response = await call(`${api}/Customers(${c.Guid})`, { method: 'POST', token, body: {} })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toContain('PATCH')
  })

  it('answers a write to Responsibilities 405, saying why and where they come from', async () => {
    const response = await call(`${api}/Responsibilities`, { method: 'POST', token, body: { Name: 'Mine' } })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET')
    expect(response.body.error.message).toBe('Responsibilities are read only here: plugins declare them and `entityctl responsibility sync` writes them; allowed: GET.')
  })

  it('answers 405 with Allow for a method a fixed route does not take, whatever the case of its path', async () => {
    const cases: [string, string, string][] = [
      ['GET', 'auth/signin', 'POST'],
      ['GET', 'workflow', 'POST'],
      ['DELETE', 'roles/tree', 'HEAD, GET'],
      ['POST', 'openapi.json', 'HEAD, GET'],
      ['PUT', 'User/Pats', 'POST, HEAD, GET'],
      // The PAT a revoke or regenerate hangs under takes no method itself: no OData 'user' set.
      ['GET', 'user/pats/0190a1b2-0000-7000-8000-000000000001', ''],
      ['DELETE', 'User/Pats/0190a1b2-0000-7000-8000-000000000001', ''],
    ]
    for (const [method, path, allow] of cases) {
      const response = await call(`${api}/${path}`, { method, token, body: method === 'GET' ? undefined : {} })
      expect([response.status, response.headers.get('allow'), response.body?.error?.code], `${method} ${path}`).toEqual([405, allow, 'MethodNotAllowed'])
    }
    const pat = await call(`${api}/user/pats/0190a1b2-0000-7000-8000-000000000001`, { method: 'DELETE', token })
    expect(pat.body.error.message).toBe('DELETE is not allowed on /api/user/pats/0190a1b2-0000-7000-8000-000000000001; it takes no method, only the paths under it do.')
    // A path beside the fixed ones is still OData's: the Roles set under its alias.
    expect((await call(`${api}/roles?$top=1`, { token })).status).toBe(200)
  })

  it('answers an unknown path under a fixed route family 404 naming the path and the routes there, before authentication', async () => {
    const cases: [string, string, string][] = [
      ['GET', 'auth/nonsense', 'No route at /api/auth/nonsense; the routes under /api/auth are POST /api/auth/signin, POST /api/auth/refresh.'],
      ['POST', 'Auth/SignOut', 'No route at /api/Auth/SignOut; the routes under /api/auth are POST /api/auth/signin, POST /api/auth/refresh.'],
      ['GET', 'auth', 'No route at /api/auth; the routes under /api/auth are POST /api/auth/signin, POST /api/auth/refresh.'],
      ['POST', 'workflow/nonsense', 'No route at /api/workflow/nonsense; the routes under /api/workflow are POST /api/workflow, POST /api/workflow/commit, POST /api/workflow/abort.'],
      ['GET', 'workflow/commit/now', 'No route at /api/workflow/commit/now; the routes under /api/workflow are POST /api/workflow, POST /api/workflow/commit, POST /api/workflow/abort.'],
      ['GET', 'user/nonsense', 'No route at /api/user/nonsense; the routes under /api/user are POST /api/user/pats, GET /api/user/pats, POST /api/user/pats/:id/revoke, POST /api/user/pats/:id/regenerate.'],
    ]
    for (const [method, path, message] of cases) {
      for (const credentials of [token, undefined]) {
        const response = await call(`${api}/${path}`, { method, token: credentials, body: method === 'GET' ? undefined : {} })
        expect([response.status, response.body?.error], `${method} ${path}`).toEqual([404, { code: 'NotFound', message }])
      }
    }
    // A first segment that names an entity set, as the Users set's alias User does, is still OData's.
    expect((await get('User/$count')).status).toBe(200)
    expect((await get('roles/$count')).status).toBe(200)
  })

  it('answers 415 for a body that is not JSON, and 400 for broken JSON', async () => {
    const xml = await call(`${api}/Customers`, { method: 'POST', token, body: '<a/>', headers: { 'Content-Type': 'application/xml' } })
    expect(xml.status).toBe(415)
    const broken = await call(`${api}/Customers`, { method: 'POST', token, body: '{"Name":', headers: { 'Content-Type': 'application/json' } })
    expect(broken.status).toBe(400)
    expect(broken.body.error.code).toBe('InvalidRequest')
  })

  it('answers 413 for a body above MaxBodyBytes', async () => {
    const response = await post('Customers', { Name: 'x'.repeat(1_100_000) })
    expect(response.status).toBe(413)
    // The limit in bytes, as a $batch over it is told.
    expect(response.body.error).toEqual({ code: 'PayloadTooLarge', message: 'The request body is larger than ApiOptions:MaxBodyBytes (1048576 bytes).' })
    // The body was left unread: the connection cannot carry another request, and says so.
    expect(response.headers.get('connection')).toBe('close')
    expect((await get('Customers?$top=1')).status).toBe(200)
  })

  it('carries OData-Version, 4.01 when the client accepts it', async () => {
    expect((await get('Customers')).headers.get('odata-version')).toBe('4.0')
    expect((await get('Customers', { 'OData-MaxVersion': '4.01' })).headers.get('odata-version')).toBe('4.01')
    // An error answer names the same version as a success would.
    const missing = await get('Customers(00000000-0000-4000-8000-000000000009)', { 'OData-MaxVersion': '4.01' })
    expect([missing.status, missing.headers.get('odata-version')]).toEqual([404, '4.01'])
    const invalid = await get('Customers?$filter=Nope eq 1', { 'OData-MaxVersion': '4.01' })
    expect([invalid.status, invalid.headers.get('odata-version')]).toEqual([400, '4.01'])
    expect((await get('Customers(00000000-0000-4000-8000-000000000009)')).headers.get('odata-version')).toBe('4.0')
  })

  it('serves the versions it speaks and answers 400 for the others, in OData-Version and OData-MaxVersion alike', async () => {
    const served: [Record<string, string>, string][] = [
      [{ 'OData-Version': '4.0', 'OData-MaxVersion': '4.0' }, '4.0'], // UI5
      [{ 'OData-Version': '4.01' }, '4.0'],
      [{ 'OData-MaxVersion': '5.0' }, '4.01'],
    ]
    for (const [headers, version] of served) {
      const answer = await get('Customers', headers)
      expect([answer.status, answer.headers.get('odata-version')], JSON.stringify(headers)).toEqual([200, version])
    }
    const refused: [Record<string, string>, string][] = [
      [{ 'OData-Version': '5.0' }, 'OData-Version 5.0 is not supported; this service speaks 4.0 and 4.01.'],
      [{ 'OData-Version': '3.0' }, 'OData-Version 3.0 is not supported; this service speaks 4.0 and 4.01.'],
      [{ 'OData-Version': 'abc' }, "OData-Version 'abc' is not a version such as 4.0 or 4.01."],
      [{ 'OData-MaxVersion': '3.0' }, 'OData-MaxVersion 3.0 is below 4.0; this service speaks 4.0 and 4.01.'],
      [{ 'OData-MaxVersion': 'abc' }, "OData-MaxVersion 'abc' is not a version such as 4.0 or 4.01."],
    ]
    for (const [headers, message] of refused) {
      const answer = await get('Customers', headers)
      expect([answer.status, answer.body?.error], JSON.stringify(headers)).toEqual([400, expect.objectContaining({ code: 'InvalidRequest', message })])
    }
  })
})

describe('Isolation (OData 4.01 Part 1 §8.2.5)', () => {
  it('refuses a request asking for snapshot isolation with 412, as a service without it must, and writes nothing', async () => {
    for (const header of ['Isolation', 'OData-Isolation']) {
      const read = await get('Customers', { [header]: 'snapshot' })
      expect([read.status, read.body?.error?.code], header).toEqual([412, 'PreconditionFailed'])
      expect(read.body.error.message, header).toContain(header)
      const write = await post('Customers', { Name: `Isolated ${header}` }, { [header]: 'snapshot' })
      expect(write.status, header).toBe(412)
      const written = await get(`Customers/$count?$filter=Name eq 'Isolated ${header}'`)
      expect(written.text, header).toBe('0')
    }
  })
})

describe('$metadata', () => {
  it('is CSDL XML by default and CSDL JSON on request', async () => {
    const xml = await get('$metadata')
    expect(xml.headers.get('content-type')).toContain('application/xml')
    expect(xml.text).toContain('<EntitySet Name="Customers"')
    const json = await get('$metadata?$format=json')
    expect(json.body.$Version).toBeDefined()
    expect(json.body.entityctl.Customer.Name.$MaxLength).toBe(100)
  })

  it('carries a strong ETag per format and version, answers a matching If-None-Match with 304, and varies on Accept', async () => {
    const xml = await get('$metadata')
    const etag = xml.headers.get('etag')!
    expect(etag).toMatch(/^"[^"]+"$/)
    expect(xml.headers.get('vary')).toMatch(/\bAccept\b/)
    expect(xml.headers.get('vary')).toMatch(/\bOData-MaxVersion\b/)
    expect((await get('$metadata')).headers.get('etag')).toBe(etag)
    const variants = [
      (await get('$metadata', { Accept: 'application/json' })).headers.get('etag'),
      (await get('$metadata?$format=json')).headers.get('etag'),
      (await get('$metadata', { 'OData-MaxVersion': '4.01' })).headers.get('etag'),
    ]
    expect(variants[0]).toBe(variants[1])
    expect(new Set([etag, variants[0], variants[2]]).size).toBe(3)

    for (const ifNoneMatch of [etag, '*', `"other", ${etag}`]) {
      const current = await get('$metadata', { 'If-None-Match': ifNoneMatch })
      expect([current.status, current.text, current.headers.get('etag')], ifNoneMatch).toEqual([304, '', etag])
    }
    const stale = await get('$metadata', { 'If-None-Match': '"other"' })
    expect(stale.status).toBe(200)
    expect(stale.text).toBe(xml.text)
    // The JSON document's tag does not revalidate the XML one.
    expect((await get('$metadata', { 'If-None-Match': variants[0]! })).status).toBe(200)
  })

  it('refuses a $format given more than once, as every read does', async () => {
    for (const path of ['$metadata?$format=json&$format=xml', '?$format=json&$format=json', 'Customers?$format=json&$format=json']) {
      const answer = await get(path)
      expect([answer.status, answer.body?.error?.message], path).toEqual([400, expect.stringContaining('$format is given more than once')])
    }
  })
})
