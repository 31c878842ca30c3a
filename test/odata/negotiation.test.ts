// Content negotiation against a real server: IEEE754Compatible, odata.metadata=none|minimal|full,
// 406 for formats the service cannot produce, Prefer: odata.maxpagesize, If-None-Match, HEAD,
// and the CSRF token handshake of SAP clients.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string
const customers: { Guid: string; Name: string }[] = []

beforeAll(async () => {
  server = await startTestServer({ config: { ApiOptions: { MaxTop: 5 } } })
  token = await server.token()
  api = server.api
  for (const [name, limit] of [['Ada', '1234567890.25'], ['Bea', 10.5], ['Cy', null], ['Dee', 3], ['Eve', 4], ['Fay', 5], ['Gus', 6]] as const) {
    const created = await call(`${api}/Customers?$select=Name`, { method: 'POST', token, body: { Name: name, CreditLimit: limit } })
    expect(created.status).toBe(200)
    customers.push(created.body)
  }
  const order = await call(`${api}/Orders`, { method: 'POST', token, body: { Number: 1, 'Customer@odata.bind': `Customers(${customers[0].Guid})` } })
  expect(order.status).toBe(200)
})
afterAll(async () => server?.stop())

const get = (path: string, headers: Record<string, string> = {}, method = 'GET') => call(`${api}/${path}`, { token, headers, method })
const ada = () => customers[0].Guid

describe('IEEE754Compatible=true', () => {
  it('writes decimals and counts as strings when Accept asks for it, and says so in Content-Type', async () => {
    const answer = await get(`Customers?$select=Name,CreditLimit&$filter=Name eq 'Ada'&$count=true&$expand=Orders($count=true;$select=Total)`, {
      Accept: 'application/json;odata.metadata=minimal;IEEE754Compatible=true',
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toContain('IEEE754Compatible=true')
    expect(answer.body['@odata.count']).toBe('1')
    expect(answer.body.value[0].CreditLimit).toBe('1234567890.25')
    expect(answer.body.value[0]['Orders@odata.count']).toBe('1')
  })

  it('writes aggregated decimals and counts as strings', async () => {
    const answer = await get(`Customers?$apply=aggregate(CreditLimit with sum as Sum,$count as N)`, { Accept: 'application/json;IEEE754Compatible=true' })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.value).toEqual([{ '@odata.id': null, Sum: '1234567918.75', N: '7' }])
  })

  it("writes a method's decimal result as a string, and the decimals of the entities a method returns", async () => {
    const revenue = await get(`Customers(${ada()})/Revenue()`, { Accept: 'application/json;odata.metadata=minimal;IEEE754Compatible=true' })
    expect(revenue.status, revenue.text).toBe(200)
    expect(revenue.headers.get('content-type')).toContain('IEEE754Compatible=true')
    expect(revenue.body).toEqual({ '@odata.context': `${api}/$metadata#Edm.Decimal`, value: '0' })
    const asNumber = await get(`Customers(${ada()})/Revenue()`)
    expect(asNumber.body.value).toBe(0)
    expect(asNumber.headers.get('content-type')).not.toContain('IEEE754Compatible')
    expect((await get(`Customers(${ada()})/Revenue()`, { Accept: 'application/json;odata.metadata=none' })).body).toEqual({ value: 0 })
    const open = await get(`Orders/OpenSince(before=2999-12-31)?$select=Total`, { Accept: 'application/json;IEEE754Compatible=true' })
    expect(open.status, open.text).toBe(200)
    expect(open.headers.get('content-type')).toContain('IEEE754Compatible=true')
    expect(open.body.value.map((order: { Total: unknown }) => order.Total)).toEqual(['0.00'])
  })

  it('takes the parameter from $format too, and keeps numbers without it', async () => {
    const asText = await get(`Customers(${ada()})?$select=CreditLimit&$format=application/json;IEEE754Compatible=true`)
    expect(asText.body.CreditLimit).toBe('1234567890.25')
    const asNumber = await get(`Customers(${ada()})?$select=CreditLimit`)
    expect(asNumber.body.CreditLimit).toBe(1234567890.25)
    expect(asNumber.headers.get('content-type')).not.toContain('IEEE754Compatible')
  })

  it('accepts a decimal written as a string in a body', async () => {
    const created = await call(`${api}/Customers?$select=CreditLimit`, {
      method: 'POST',
      token,
      headers: { 'Content-Type': 'application/json;IEEE754Compatible=true', Accept: 'application/json;IEEE754Compatible=true' },
      body: { Name: 'Stringly', CreditLimit: '9876543210.99' },
    })
    expect(created.status).toBe(200)
    // The write's answer is written as asked, as a read's is.
    expect(created.body.CreditLimit).toBe('9876543210.99')
    expect(created.headers.get('content-type')).toContain('IEEE754Compatible=true')
    const read = await get(`Customers(${created.body.Guid})?$select=CreditLimit`, { Accept: 'application/json;IEEE754Compatible=true' })
    expect(read.body.CreditLimit).toBe('9876543210.99')
    await call(`${api}/Customers(${created.body.Guid})`, { method: 'DELETE', token })
  })
})

describe('odata.metadata', () => {
  it('none: no context and no etags in the body, the ETag header stays', async () => {
    const collection = await get(`Customers?$select=Name&$top=2&$orderby=Name`, { Accept: 'application/json;odata.metadata=none' })
    expect(collection.headers.get('content-type')).toContain('odata.metadata=none')
    expect(collection.body).toEqual({ value: [{ Guid: customers[0].Guid, Name: 'Ada' }, { Guid: customers[1].Guid, Name: 'Bea' }] })
    const entity = await get(`Customers(${ada()})?$select=Name`, { Accept: 'application/json;odata.metadata=none' })
    expect(entity.body).toEqual({ Guid: ada(), Name: 'Ada' })
    expect(entity.headers.get('etag')).toMatch(etagAt(1))
    // A write's answer too.
    const dee = customers[3].Guid
    const patched = await call(`${api}/Customers(${dee})?$select=Name`, { method: 'PATCH', token, body: { Name: 'Dee' }, headers: { Accept: 'application/json;odata.metadata=none' } })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.headers.get('content-type')).toContain('odata.metadata=none')
    expect(patched.body).toEqual({ Guid: dee, Name: 'Dee' })
  })

  it('full: type, id, edit link and navigation links, on expanded entities too; the id resolves', async () => {
    const answer = await get(`Customers(${ada()})?$select=Name&$expand=Orders($select=Number)`, { Accept: 'application/json;odata.metadata=full' })
    expect(answer.status).toBe(200)
    const body = answer.body
    expect(body).toMatchObject({
      '@odata.type': '#entityctl.Customer',
      '@odata.id': `Customers(${ada()})`,
      '@odata.editLink': `Customers(${ada()})`,
      'Orders@odata.navigationLink': `Customers(${ada()})/Orders`,
      Name: 'Ada',
    })
    const order = body.Orders[0]
    expect(order['@odata.type']).toBe('#entityctl.Order')
    expect(order['Customer@odata.navigationLink']).toBe(`${order['@odata.id']}/Customer`)
    // Relative URLs resolve against the context URL.
    const resolved = new URL(order['@odata.id'], body['@odata.context']).href
    const again = await call(`${resolved}?$select=Number`, { token })
    expect(again.body.Number).toBe(1)
  })

  it('full: the type of each value its JSON does not tell, right before it (OData JSON 4.5.3)', async () => {
    const select = 'Number,OrderDate,Status,Total,Title,Next'
    const answer = await get(`Orders?$select=${select}&$compute=Number add 1 as Next&$expand=Customer($select=Name,CreditLimit)`, { Accept: 'application/json;odata.metadata=full' })
    expect(answer.status, answer.text).toBe(200)
    const order = answer.body.value[0]
    expect(order).toMatchObject({
      'Guid@odata.type': '#Guid',
      'Number@odata.type': '#Int32',
      'OrderDate@odata.type': '#Date',
      'Status@odata.type': '#entityctl.OrderStatus',
      'Total@odata.type': '#Decimal',
      'Next@odata.type': '#Int32',
    })
    // A JSON string is an Edm.String unless said otherwise: Title (a String) needs no type.
    expect(order).not.toHaveProperty('Title@odata.type')
    expect(answer.body.value[0].Customer).toMatchObject({ 'Guid@odata.type': '#Guid', 'CreditLimit@odata.type': '#Decimal' })
    expect(answer.body.value[0].Customer).not.toHaveProperty('Name@odata.type')
    // Each annotation immediately precedes its value, as the streaming format requires.
    const keys = Object.keys(order)
    for (const key of keys.filter((k) => k.endsWith('@odata.type') && !k.startsWith('@'))) {
      expect(keys[keys.indexOf(key) + 1]).toBe(key.slice(0, -'@odata.type'.length))
    }
  })

  it('full: a navigation link immediately precedes its expanded navigation (OData JSON 8.1)', async () => {
    const answer = await get(`Customers(${ada()})?$select=Name&$expand=Orders($select=Number)`, { Accept: 'application/json;odata.metadata=full' })
    const keys = Object.keys(answer.body)
    expect(keys[keys.indexOf('Orders') - 1]).toBe('Orders@odata.navigationLink')
    const order = await get(`Orders?$select=Number&$expand=Customer($select=Name)`, { Accept: 'application/json;odata.metadata=full' })
    const orderKeys = Object.keys(order.body.value[0])
    expect(orderKeys[orderKeys.indexOf('Customer') - 1]).toBe('Customer@odata.navigationLink')
  })

  it('full: advertises the instance methods, each with a title and a target that calls it (OData JSON 16, 17)', async () => {
    const answer = await get(`Customers(${ada()})?$expand=Orders`, { Accept: 'application/json;odata.metadata=full' })
    expect(answer.body['#entityctl.Revenue']).toEqual({ title: 'Sum of the totals of all orders of this customer', target: `Customers(${ada()})/entityctl.Revenue()` })
    const order = answer.body.Orders[0]
    expect(order['#entityctl.Close']).toEqual({ title: 'Closes the order', target: `${order['@odata.id']}/entityctl.Close` })
    // Static methods are bound to the collection: not advertised on an entity.
    expect(order).not.toHaveProperty('#entityctl.OpenSince')
    const revenue = await call(new URL(answer.body['#entityctl.Revenue'].target, answer.body['@odata.context']).href, { token })
    expect(revenue.status, revenue.text).toBe(200)
    expect(revenue.body.value).toBe(0)
    expect((await get(`Customers(${ada()})`)).body).not.toHaveProperty('#entityctl.Revenue')
  })

  it("full: a property read names the property's type when its JSON does not tell it", async () => {
    const full = { Accept: 'application/json;odata.metadata=full' }
    const limit = await get(`Customers(${ada()})/CreditLimit`, full)
    expect(limit.status, limit.text).toBe(200)
    expect(limit.body).toEqual({ '@odata.context': `${api}/$metadata#Customers(${ada()})/CreditLimit`, '@odata.type': '#Decimal', value: 1234567890.25 })
    expect(Object.keys(limit.body)).toEqual(['@odata.context', '@odata.type', 'value'])
    expect((await get(`Customers(${ada()})/Name`, full)).body).not.toHaveProperty('@odata.type')
    expect((await get(`Customers(${ada()})/CreditLimit`)).body).not.toHaveProperty('@odata.type')
  })

  it('full: the types of the values $apply makes, grouped and aggregated', async () => {
    const answer = await get(`Orders?$apply=groupby((Status,Customer/Name),aggregate(Total with sum as Sum,$count as N))`, { Accept: 'application/json;odata.metadata=full' })
    expect(answer.status, answer.text).toBe(200)
    // Transient instances, the row and its group through Customer (OData JSON §4.5.8).
    expect(answer.body.value[0]).toEqual({
      '@odata.id': null,
      'Status@odata.type': '#entityctl.OrderStatus',
      Status: 'Open',
      Customer: { '@odata.id': null, Name: 'Ada' },
      'Sum@odata.type': '#Decimal',
      Sum: 0,
      'N@odata.type': '#Int64',
      N: 1,
    })
    const computed = await get(`Orders?$apply=compute(Number add 1 as Next)`, { Accept: 'application/json;odata.metadata=full' })
    expect(computed.body.value[0]).toMatchObject({ 'Guid@odata.type': '#Guid', 'Next@odata.type': '#Int32', Next: 2 })
  })

  it("an expanded collection's count comes right before it, as its control information (OData JSON 4.4)", async () => {
    for (const accept of ['application/json', 'application/json;odata.metadata=full']) {
      const answer = await get(`Customers(${ada()})?$expand=Orders($count=true)`, { Accept: accept })
      const keys = Object.keys(answer.body)
      expect(keys[keys.indexOf('Orders') - 1], accept).toBe('Orders@odata.count')
    }
  })

  it('refuses an unknown metadata level with 406', async () => {
    const answer = await get('Customers', { Accept: 'application/json;odata.metadata=most' })
    expect(answer.status).toBe(406)
    expect(answer.body.error.code).toBe('NotAcceptable')
  })
})

describe('406 Not Acceptable', () => {
  it.each([
    ['Customers', { Accept: 'application/atom+xml' }],
    ['Customers', { Accept: 'application/json;q=0, text/html' }],
    [`Customers(${'00000000-0000-0000-0000-000000000000'})`, { Accept: 'application/xml' }],
    ['Customers?$format=atom', {}],
    ['$metadata', { Accept: 'text/html' }],
    // The fixed routes answer JSON too: the same 406, not JSON regardless.
    ['openapi.json', { Accept: 'application/atom+xml' }],
    ['roles/tree', { Accept: 'text/html' }],
    ['user/pats', { Accept: 'application/xml' }],
  ])('%s with %j', async (path, headers) => {
    const answer = await get(path, headers)
    expect(answer.status).toBe(406)
    expect(answer.body.error).toMatchObject({ code: 'NotAcceptable' })
    expect(answer.body.error.message).toContain('available as')
  })

  it('serves the explorer, a page, to a browser that asks for HTML', async () => {
    const page = await call(`${api}/explorer`, { headers: { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } })
    expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')])
    expect((await get('openapi.json', { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' })).status).toBe(200)
  })

  it('serves what a client accepts among several, by quality', async () => {
    const answer = await get('Customers?$top=1', { Accept: 'application/atom+xml;q=0.9, application/json;q=0.5' })
    expect(answer.status).toBe(200)
    const metadata = await get('$metadata', { Accept: 'application/json' })
    expect(metadata.headers.get('content-type')).toContain('application/json')
    expect((await get('$metadata', { Accept: 'application/xml' })).headers.get('content-type')).toContain('application/xml')
    expect((await get('Customers/$count', { Accept: 'text/plain' })).text).toBe(String(customers.length))
  })
})

describe('a count (/$count)', () => {
  // OData answers a count as text/plain and negotiates nothing for it (URL Conventions 4.01
  // §4.8); RFC 9110 §12.5.1 lets a service send it to a client that asked for JSON, instead
  // of 406, and clients rely on that: the SAP Cloud SDK's count() sends Accept: application/json.
  it('is text/plain to a client that accepts only JSON, with or without JSON parameters', async () => {
    for (const accept of ['application/json', 'application/json;odata.metadata=minimal;IEEE754Compatible=true']) {
      const answer = await get('Customers/$count', { Accept: accept })
      expect([answer.status, answer.headers.get('content-type'), answer.text], accept).toEqual([200, expect.stringMatching(/^text\/plain\b/), String(customers.length)])
    }
  })

  it('is 406 to a client that accepts neither text nor JSON', async () => {
    const answer = await get('Customers/$count', { Accept: 'application/xml' })
    expect([answer.status, answer.body.error.code]).toEqual([406, 'NotAcceptable'])
  })
})

describe('Prefer: odata.maxpagesize', () => {
  it('pages at the preferred size, says so, and the next link goes on', async () => {
    const first = await get('Customers?$select=Name&$orderby=Name', { Prefer: 'odata.maxpagesize=3' })
    expect(first.headers.get('preference-applied')).toBe('odata.maxpagesize=3')
    expect(first.body.value.map((c: { Name: string }) => c.Name)).toEqual(['Ada', 'Bea', 'Cy'])
    const next = await call(first.body['@odata.nextLink'], { token, headers: { Prefer: 'odata.maxpagesize=3' } })
    expect(next.body.value.map((c: { Name: string }) => c.Name)).toEqual(['Dee', 'Eve', 'Fay'])
  })

  it('takes the 4.01 name without the prefix, and says it applied it by the name the client gave', async () => {
    for (const name of ['maxpagesize', 'odata.maxpagesize', 'MaxPageSize']) {
      const page = await get('Customers?$select=Name&$orderby=Name', { Prefer: `${name}=2` })
      expect([page.headers.get('preference-applied'), page.body.value.length], name).toEqual([`${name}=2`, 2])
    }
    // Given both ways, the unprefixed one counts, wherever it stands.
    for (const prefer of ['odata.maxpagesize=4, maxpagesize=2', 'maxpagesize=2, odata.maxpagesize=4']) {
      const page = await get('Customers?$select=Name&$orderby=Name', { Prefer: prefer })
      expect([page.headers.get('preference-applied'), page.body.value.length], prefer).toEqual(['maxpagesize=2', 2])
    }
  })

  it('stays within MaxTop, and does not apply to a read with $top', async () => {
    const capped = await get('Customers', { Prefer: 'return=minimal, odata.maxpagesize=1000' })
    expect(capped.headers.get('preference-applied')).toBe('odata.maxpagesize=5')
    expect(capped.body.value).toHaveLength(5)
    const topped = await get('Customers?$top=4', { Prefer: 'odata.maxpagesize=2' })
    expect(topped.headers.get('preference-applied')).toBeNull()
    expect(topped.body.value).toHaveLength(4)
  })
})

describe('If-None-Match', () => {
  it('answers 304 without a body while the ETag matches, 200 once it changed', async () => {
    const first = await get(`Customers(${customers[1].Guid})?$select=Name`)
    const etag = first.headers.get('etag')!
    const unchanged = await get(`Customers(${customers[1].Guid})?$select=Name`, { 'If-None-Match': etag })
    expect(unchanged.status).toBe(304)
    expect(unchanged.text).toBe('')
    expect(unchanged.headers.get('etag')).toBe(etag)
    expect((await get(`Customers(${customers[1].Guid})`, { 'If-None-Match': '*' })).status).toBe(304)
    const patched = await call(`${api}/Customers(${customers[1].Guid})`, { method: 'PATCH', token, body: { City: 'Rome' } })
    expect(patched.status).toBe(204)
    const changed = await get(`Customers(${customers[1].Guid})?$select=Name`, { 'If-None-Match': etag })
    expect(changed.status).toBe(200)
    expect(changed.body.Name).toBe('Bea')
  })
})

describe('HEAD', () => {
  it('answers the headers of a GET without a body, on the service root, a collection and an entity', async () => {
    const root = await get('', {}, 'HEAD')
    expect(root.status).toBe(200)
    expect(root.text).toBe('')
    expect(root.headers.get('odata-version')).toBe('4.0')
    const collection = await get('Customers?$select=Name', {}, 'HEAD')
    expect(collection.status).toBe(200)
    expect(collection.headers.get('content-type')).toContain('application/json')
    const entity = await get(`Customers(${ada()})`, {}, 'HEAD')
    expect(entity.status).toBe(200)
    expect(entity.headers.get('etag')).toMatch(etagAt(1))
    expect((await get('Customers(00000000-0000-0000-0000-000000000000)', {}, 'HEAD')).status).toBe(404)
  })

  it('answers the headers of a GET on a function, bound or static; an action stays POST only', async () => {
    for (const path of [`Customers(${ada()})/Revenue()`, 'Orders/OpenSince(before=2100-01-01)?$select=Number']) {
      const got = await get(path)
      const head = await get(path, {}, 'HEAD')
      expect([head.status, head.text, head.headers.get('content-type')], path).toEqual([200, '', got.headers.get('content-type')])
    }
    const action = await get(`Customers(${ada()})/Orders`, {}, 'GET')
    const close = await get(`Orders(${action.body.value[0].Guid})/Close`, {}, 'HEAD')
    expect([close.status, close.headers.get('allow')]).toEqual([405, 'POST'])
  })
})

describe('CSRF token handshake', () => {
  it('hands out a token on a fetch and accepts a write carrying it', async () => {
    const fetched = await get('', { 'X-CSRF-Token': 'Fetch' }, 'HEAD')
    expect(fetched.status).toBe(200)
    const csrf = fetched.headers.get('x-csrf-token')
    expect(csrf).toBeTruthy()
    expect((await get('Customers?$top=1', { 'X-CSRF-Token': 'fetch' })).headers.get('x-csrf-token')).toBe(csrf)
    const created = await call(`${api}/Customers`, { method: 'POST', token, headers: { 'X-CSRF-Token': csrf! }, body: { Name: 'Csrf' } })
    expect(created.status).toBe(200)
    await call(`${api}/Customers(${created.body.Guid})`, { method: 'DELETE', token })
    expect((await get('Customers?$top=1')).headers.get('x-csrf-token')).toBeNull()
  })
})
