// Resource paths against a real server: single properties and /$value, /$count after
// collection paths, 404 for a path whose parent does not exist, $ref reads and
// $expand=…/$ref|/$count, context URLs as OData writes them, and 501 (never 404 or 405) for
// valid writes the service does not make.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string
let ada: string
let bob: string
let orders: string[]
const MISSING = '0193a3f4-0000-7000-8000-000000000000'

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
  ada = (await post('Customers', { Name: 'Ada', CreditLimit: '1234567890.12' })).Guid
  bob = (await post('Customers', { Name: 'Bob' })).Guid
  const product = (await post('Products', { Code: 'P1', Name: 'Tea', Price: 2.5 })).Guid
  orders = []
  for (const number of [1, 2, 3]) {
    const lines = [{ 'Product@odata.bind': `Products(${product})`, Quantity: number }]
    orders.push((await post('Orders', { Number: number, 'Customer@odata.bind': `Customers(${ada})`, Lines: lines })).Guid)
  }
})
afterAll(async () => server?.stop())

async function post(path: string, body: unknown) {
  const answer = await call(`${api}/${path}`, { method: 'POST', token, body })
  expect(answer.status).toBe(200)
  return answer.body
}
const get = (path: string, headers: Record<string, string> = {}) => call(`${api}/${path}`, { token, headers })
const context = (answer: { body: any }) => decodeURIComponent(String(answer.body['@odata.context']).replace(/^.*\$metadata/, '$metadata'))

describe('a single property', () => {
  it('answers its value with the context of the property and the entity ETag', async () => {
    const answer = await get(`Customers(${ada})/Name`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ '@odata.context': `${api}/$metadata#Customers(${ada})/Name`, value: 'Ada' })
    expect(answer.headers.get('etag')).toMatch(etagAt(1))
    expect(answer.headers.get('etag')).toBe((await get(`Customers(${ada})`)).headers.get('etag'))
  })

  it('keeps every digit of a decimal, as a number or (IEEE754Compatible) a string', async () => {
    expect((await get(`Customers(${ada})/CreditLimit`)).text).toContain('"value":1234567890.12}')
    expect((await get(`Customers(${ada})/CreditLimit`, { Accept: 'application/json;IEEE754Compatible=true' })).body.value).toBe('1234567890.12')
  })

  it('answers /$value as plain text, and 204 for a null value', async () => {
    const raw = await get(`Customers(${ada})/Name/$value`)
    expect(raw.status).toBe(200)
    expect(raw.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(raw.text).toBe('Ada')
    expect((await get(`Customers(${ada})/CreditLimit/$value`)).text).toBe('1234567890.12')
    expect((await get(`Customers(${bob})/CreditLimit`)).status).toBe(204)
    expect((await get(`Customers(${bob})/City/$value`)).status).toBe(204)
  })

  it('reads a property of an entity reached through a reference, and a computed one', async () => {
    const answer = await get(`Orders(${orders[0]})/Customer/Name`)
    expect(answer.body.value).toBe('Ada')
    expect(context(answer)).toBe(`$metadata#Orders(${orders[0]})/Customer/Name`)
    expect((await get(`Orders(${orders[1]})/Title`)).body.value).toBe('Order 2')
  })

  it('answers 204 for a single-valued navigation that relates no entity, and 404 when its entity does not exist', async () => {
    const root = (await post('Roles', { Name: 'Paths root' })).Guid
    const child = (await post('Roles', { Name: 'Paths child', 'Parent@odata.bind': `Roles(${root})` })).Guid
    for (const path of [`Roles(${root})/Parent`, `Roles(${root})/Parent/$ref`, `Roles/${root}/Parent?$select=Name`]) {
      const answer = await get(path)
      expect([answer.status, answer.text], path).toEqual([204, ''])
    }
    expect((await get(`Roles(${child})/Parent?$select=Name`)).body.Name).toBe('Paths root')
    expect((await get(`Roles(${MISSING})/Parent`)).status).toBe(404)
    expect((await get(`Roles(${MISSING})/Parent/$ref`)).status).toBe(404)
  })

  it('answers 404 for an unknown entity or property, and 400 for query options that shape entities', async () => {
    expect((await get(`Customers(${MISSING})/Name`)).status).toBe(404)
    expect((await get(`Orders(${MISSING})/Customer/Name`)).status).toBe(404)
    expect((await get(`Customers(${ada})/Nom`)).status).toBe(404)
    expect((await get(`Customers(${ada})/Name/Length`)).status).toBe(404)
    expect((await get(`Customers(${ada})/Name?$select=Name`)).status).toBe(400)
  })
})

describe('a path whose parent does not exist', () => {
  it('is 404, where an existing parent without members is an empty collection', async () => {
    const missing = await get(`Customers(${MISSING})/Orders`)
    expect(missing.status).toBe(404)
    expect(missing.body.error).toMatchObject({ code: 'NotFound' })
    expect(missing.body.error.message).toContain(MISSING)
    expect((await get(`Customers(${MISSING})/Orders?$count=true&$top=1`)).status).toBe(404)
    expect((await get(`Customers(${MISSING})/Orders/$count`)).status).toBe(404)
    expect((await get(`Customers(${MISSING})/Orders/$ref`)).status).toBe(404)
    const empty = await get(`Customers(${bob})/Orders`)
    expect(empty.status).toBe(200)
    expect(empty.body.value).toEqual([])
    expect((await get(`Customers(${bob})/Orders/$count`)).text).toBe('0')
  })

  it('checks the parent of each request when the read is repeated (its plan takes the key once)', async () => {
    const numbers = async (customer: string) => {
      const answer = await get(`Customers(${customer})/Orders?$select=Number&$orderby=Number&$count=true`)
      return answer.status === 200 ? answer.body.value.map((o: { Number: number }) => o.Number) : answer.status
    }
    const answers = []
    for (const customer of [ada, bob, MISSING, ada, MISSING, bob, ada]) answers.push(await numbers(customer))
    expect(answers).toEqual([[1, 2, 3], [], 404, [1, 2, 3], 404, [], [1, 2, 3]])
  })
})

describe('a member of a collection navigation, by its key', () => {
  // OpenUI5 reads a row of a relative list (a created one, say) as Customers(k)/Orders(m).
  it('is that entity, only when it is one of the parent\'s, in either key form', async () => {
    const order = await get(`Customers(${ada})/Orders(${orders[1]})?$select=Number`)
    expect(order.status, order.text).toBe(200)
    expect(order.body).toEqual({ '@odata.context': `${api}/$metadata#Orders(Number)/$entity`, '@odata.etag': expect.stringMatching(etagAt(1)), Guid: orders[1], Number: 2 })
    expect(order.headers.get('etag')).toBe(order.body['@odata.etag'])
    expect((await get(`Customers(${ada})/Orders/${orders[2]}?$select=Number`)).body.Number).toBe(3)
    for (const path of [`Customers(${bob})/Orders(${orders[1]})`, `Customers(${ada})/Orders(${MISSING})`, `Customers(${MISSING})/Orders(${orders[1]})`]) {
      const answer = await get(path)
      expect(answer.status, path).toBe(404)
      expect(answer.body.error.code).toBe('NotFound')
    }
  })

  it('keeps each key when the read is repeated with others (its plan takes them as parameters)', async () => {
    const numbers = []
    for (const [customer, order] of [[ada, orders[0]], [bob, orders[0]], [ada, orders[2]], [ada, orders[0]]]) {
      const answer = await get(`Customers(${customer})/Orders(${order})?$select=Number`)
      numbers.push(answer.status === 200 ? answer.body.Number : answer.status)
    }
    expect(numbers).toEqual([1, 404, 3, 1])
  })

  it('reads its properties and its reference; refuses a key after a single-valued navigation', async () => {
    const number = await get(`Customers(${ada})/Orders(${orders[2]})/Number`)
    expect(number.body).toEqual({ '@odata.context': `${api}/$metadata#Customers(${ada})/Orders(${orders[2]})/Number`, value: 3 })
    expect((await get(`Customers(${bob})/Orders(${orders[2]})/Number`)).status).toBe(404)
    expect((await get(`Customers(${ada})/Orders(${orders[2]})/$ref`)).body['@odata.id']).toBe(`Orders(${orders[2]})`)
    expect((await get(`Orders(${orders[0]})/Customer(${ada})`)).status).toBe(404)
    // A navigation from the member is valid OData the service does not follow (below).
    expect((await get(`Customers(${ada})/Orders(${orders[2]})/Lines`)).status).toBe(501)
  })

  it('calls its bound action, only when it is one of the parent\'s (OpenUI5 calls an action on a row so)', async () => {
    const status = async () => (await get(`Orders(${orders[0]})?$select=Status`)).body.Status
    const refused = await call(`${api}/Customers(${bob})/Orders(${orders[0]})/entityctl.Close`, { method: 'POST', token, body: {} })
    expect(refused.status).toBe(404)
    expect(refused.body.error.code).toBe('NotFound')
    expect(await status()).toBe('Open')
    const closed = await call(`${api}/Customers(${ada})/Orders(${orders[0]})/entityctl.Close`, { method: 'POST', token, body: {} })
    expect(closed.status, closed.text).toBe(204)
    expect(closed.headers.get('etag')).toMatch(etagAt(2))
    expect(await status()).toBe('Closed')
  })
})

describe('/$count after a collection path', () => {
  it('counts a set, a navigation, with $filter', async () => {
    expect((await get('Customers/$count')).text).toBe('2')
    expect((await get(`Customers(${ada})/Orders/$count`)).text).toBe('3')
    expect((await get(`Customers(${ada})/Orders/$count?$filter=Number gt 1`)).text).toBe('2')
  })
})

describe('a type cast (URL Conventions 4.11)', () => {
  // No type derives from another in the model: a cast to the entity's own type is the path without it.
  it("to the entity's own type changes nothing: after a set, a key, a navigation, a member", async () => {
    const same: [string, string][] = [
      ['Orders/entityctl.Order?$select=Number&$orderby=Number', 'Orders?$select=Number&$orderby=Number'],
      ['Orders/entityctl.Order/$count', 'Orders/$count'],
      [`Orders/entityctl.Order(${orders[1]})?$select=Number`, `Orders(${orders[1]})?$select=Number`],
      [`Orders/entityctl.Order/${orders[1]}?$select=Number`, `Orders(${orders[1]})?$select=Number`],
      [`Orders(${orders[1]})/entityctl.Order?$select=Number`, `Orders(${orders[1]})?$select=Number`],
      [`Orders(${orders[1]})/entityctl.Order/Number`, `Orders(${orders[1]})/Number`],
      [`Orders(${orders[1]})/Customer/entityctl.Customer?$select=Name`, `Orders(${orders[1]})/Customer?$select=Name`],
      [`Customers(${ada})/Orders/entityctl.Order?$select=Number&$orderby=Number`, `Customers(${ada})/Orders?$select=Number&$orderby=Number`],
      [`Customers(${ada})/Orders/entityctl.Order(${orders[2]})/entityctl.Order?$select=Number`, `Customers(${ada})/Orders(${orders[2]})?$select=Number`],
    ]
    for (const [cast, plain] of same) {
      const [answer, expected] = [await get(cast), await get(plain)]
      expect(answer.status, `${cast}: ${answer.text}`).toBe(200)
      expect(answer.text, cast).toBe(expected.text)
    }
  })

  it("to the entity's own type writes as the path without it", async () => {
    const created = await call(`${api}/Products/entityctl.Product`, { method: 'POST', token, body: { Code: 'CAST', Name: 'Cast', Price: 1 } })
    expect(created.status, created.text).toBe(200)
    const product = `Products(${created.body.Guid})/entityctl.Product`
    expect((await call(`${api}/${product}`, { method: 'PATCH', token, body: { Name: 'Recast' } })).status).toBe(204)
    expect((await get(`${product}/Name`)).body.value).toBe('Recast')
    expect((await call(`${api}/${product}`, { method: 'DELETE', token })).status).toBe(204)
    expect((await get(product)).status).toBe(404)
  })

  it("in $expand, to the type it follows changes nothing; to another type is 400 saying so", async () => {
    const plain = await get(`Orders(${orders[1]})?$select=Number&$expand=Customer($select=Name)`)
    for (const expand of ['Customer/entityctl.Customer($select=Name)', 'entityctl.Order/Customer($select=Name)', 'entityctl.Order/Customer/entityctl.Customer($select=Name)']) {
      const answer = await get(`Orders(${orders[1]})?$select=Number&$expand=${expand}`)
      expect(answer.status, `${expand}: ${answer.text}`).toBe(200)
      expect(answer.text, expand).toBe(plain.text)
    }
    const refused = await get(`Orders?$expand=Customer/entityctl.Order`)
    expect(refused.status).toBe(400)
    expect(refused.body.error.message).toBe(
      '$expand=Customer/entityctl.Order: the type cast entityctl.Order does not apply to Customers, whose type is entityctl.Customer: no type derives from it, so entityctl.Customer is the only cast it takes.',
    )
  })

  it('in $filter, $orderby and $select, to the type it follows changes nothing; to another type is 400 saying so', async () => {
    const same: [string, string][] = [
      ['Orders?$filter=Lines/entityctl.OrderLine/any(l:l/Quantity gt 1)&$select=Number', 'Orders?$filter=Lines/any(l:l/Quantity gt 1)&$select=Number'],
      ['Orders?$filter=Lines/any(l:l/entityctl.OrderLine/Quantity gt 1)&$select=Number', 'Orders?$filter=Lines/any(l:l/Quantity gt 1)&$select=Number'],
      ['Orders?$filter=entityctl.Order/Number ge 2 and $it/entityctl.Order/Number le 3&$select=Number', 'Orders?$filter=Number ge 2 and Number le 3&$select=Number'],
      ["Orders?$filter=Customer/entityctl.Customer/Name eq 'Ada' and Lines/entityctl.OrderLine/$count eq 1&$select=Number", "Orders?$filter=Customer/Name eq 'Ada' and Lines/$count eq 1&$select=Number"],
      ['Orders?$select=entityctl.Order/Number&$orderby=entityctl.Order/Number desc', 'Orders?$select=Number&$orderby=Number desc'],
      ['Orders?$select=Number,Customer/entityctl.Customer/Name', 'Orders?$select=Number,Customer/Name'],
    ]
    for (const [cast, plain] of same) {
      const [answer, expected] = [await get(cast), await get(plain)]
      expect(answer.status, `${cast}: ${answer.text}`).toBe(200)
      expect(answer.text, cast).toBe(expected.text)
    }
    const refused: [string, string][] = [
      ['Orders?$filter=Lines/entityctl.Product/any(l:l/Quantity gt 1)', 'In $filter, the type cast entityctl.Product does not apply to OrderLines, whose type is entityctl.OrderLine: no type derives from it, so entityctl.OrderLine is the only cast it takes.'],
      ['Orders?$orderby=Customer/entityctl.Order/Number', 'In $orderby, the type cast entityctl.Order does not apply to Customers, whose type is entityctl.Customer: no type derives from it, so entityctl.Customer is the only cast it takes.'],
      ['Orders?$select=entityctl.Customer/Number', '$select=entityctl.Customer/Number: the type cast entityctl.Customer does not apply to Orders, whose type is entityctl.Order: no type derives from it, so entityctl.Order is the only cast it takes.'],
    ]
    for (const [path, message] of refused) {
      const answer = await get(path)
      expect(answer.status, path).toBe(400)
      expect(answer.body.error.message, path).toBe(message)
      expect(answer.body.error.target, path).toMatch(/^entityctl\./)
    }
  })

  it('to another type is 404 saying the type is not the one of the set', async () => {
    const refused: [string, string][] = [
      ['Orders/entityctl.Customer', 'The type cast entityctl.Customer does not apply to Orders, whose type is entityctl.Order: no type derives from it, so entityctl.Order is the only cast it takes.'],
      [`Orders(${orders[1]})/Customer/entityctl.Order`, 'The type cast entityctl.Order does not apply to Customers, whose type is entityctl.Customer: no type derives from it, so entityctl.Customer is the only cast it takes.'],
      [`Customers(${ada})/Orders/Other.Order`, 'Other.Order is neither a type of this service nor a method of Orders; a type cast after Orders names its type, entityctl.Order.'],
    ]
    for (const [path, message] of refused) {
      const answer = await get(path)
      expect(answer.status, path).toBe(404)
      expect(answer.body.error.message, path).toBe(message)
    }
  })
})

describe('$ref', () => {
  it('reads a collection of references', async () => {
    const answer = await get(`Customers(${ada})/Orders/$ref?$orderby=Number&$top=2`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({
      '@odata.context': `${api}/$metadata#Collection($ref)`,
      value: [{ '@odata.id': `Orders(${orders[0]})` }, { '@odata.id': `Orders(${orders[1]})` }],
    })
    const all = await get('Customers/$ref?$filter=Name eq \'Bob\'')
    expect(all.body.value).toEqual([{ '@odata.id': `Customers(${bob})` }])
  })

  it('reads a single reference, by navigation or by key', async () => {
    const answer = await get(`Orders(${orders[0]})/Customer/$ref`)
    expect(answer.body).toEqual({ '@odata.context': `${api}/$metadata#$ref`, '@odata.id': `Customers(${ada})` })
    expect((await get(`Customers(${bob})/$ref`)).body['@odata.id']).toBe(`Customers(${bob})`)
  })

  it('answers 304 to an If-None-Match that holds the entity ETag, as the entity read does', async () => {
    for (const path of [`Customers(${ada})/Name`, `Customers(${ada})/Name/$value`, `Customers(${bob})/City`]) {
      const etag = (await get(path.replace(/\/(Name|City)(\/\$value)?$/, ''))).headers.get('etag')!
      const current = await get(path, { 'If-None-Match': etag })
      expect(current.status, path).toBe(304)
      expect(current.headers.get('etag')).toBe(etag)
      expect((await get(path, { 'If-None-Match': 'W/"0"' })).status, path).not.toBe(304)
    }
  })

  it('refuses $select on references', async () => {
    expect((await get(`Customers(${ada})/Orders/$ref?$select=Number`)).status).toBe(400)
  })

  it('expands references and counts', async () => {
    const answer = await get(`Customers(${ada})?$select=Name&$expand=Orders/$ref($orderby=Number desc;$top=1),Orders/$count`)
    expect(answer.status).toBe(400) // each navigation is expanded once
    const refs = await get(`Customers(${ada})?$select=Name&$expand=Orders/$ref($orderby=Number desc;$top=1)`)
    expect(refs.body.Orders).toEqual([{ '@odata.id': `Orders(${orders[2]})` }])
    const counted = await get(`Customers?$select=Name&$orderby=Name&$expand=Orders/$count`)
    expect(counted.body.value).toEqual([
      expect.objectContaining({ Name: 'Ada', 'Orders@odata.count': 3 }),
      expect.objectContaining({ Name: 'Bob', 'Orders@odata.count': 0 }),
    ])
    expect(counted.body.value[0].Orders).toBeUndefined()
    const reference = await get(`Orders(${orders[0]})?$expand=Customer/$ref`)
    expect(reference.body.Customer).toEqual({ '@odata.id': `Customers(${ada})` })
  })

  it('expands the references of every navigation with */$ref (OData 4.01 11.2.5.2.1)', async () => {
    const answer = await get(`Orders(${orders[0]})?$expand=*/$ref`)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.Customer).toEqual({ '@odata.id': `Customers(${ada})` })
    expect(answer.body.Lines).toEqual([{ '@odata.id': expect.stringMatching(/^OrderLines\(/) }])
  })
})

describe('context URLs', () => {
  it.each([
    ['Customers', '$metadata#Customers(Guid)'],
    ['Customers?$select=Name', '$metadata#Customers(Name)'],
    ['Customers?$select=Name&$expand=Orders($select=Number;$expand=Lines($select=Quantity))', '$metadata#Customers(Name,Orders(Number,Lines(Quantity)))'],
    ['Customers?$expand=Orders', '$metadata#Customers(Guid,Orders(Guid))'],
    // `*` is each navigation named: OData JSON Format 4.01 §10 lists expanded navigations.
    ['Customers?$expand=*', '$metadata#Customers(Guid,Orders(Guid))'],
    ['Orders?$expand=*', '$metadata#Orders(Guid,Customer(Guid),Lines(Guid))'],
    ['Orders?$expand=Lines($select=Quantity),*', '$metadata#Orders(Guid,Lines(Quantity),Customer(Guid))'],
    ['Customers?$select=Name&$expand=Orders($select=Number;$expand=*)', '$metadata#Customers(Name,Orders(Number,Customer(Guid),Lines(Guid)))'],
    ['Orders?$expand=*/$ref', '$metadata#Orders(Guid)'],
    ['Orders?$select=Customer/Name&$expand=*', '$metadata#Orders(Customer(Name),Lines(Guid))'],
    // Selected and expanded: named once, with its list.
    ['Customers?$select=Name,Orders&$expand=Orders($select=Number)', '$metadata#Customers(Name,Orders(Number))'],
    ['Orders?$apply=groupby((Customer/Name,Status),aggregate(Number with sum as Sum,$count as N))', '$metadata#Orders(Customer(Name),Status,Sum,N)'],
    ['Orders?$apply=aggregate($count as N)', '$metadata#Orders(N)'],
  ])('%s → %s', async (path, expected) => {
    const answer = await get(path)
    expect(answer.status).toBe(200)
    expect(context(answer)).toBe(expected)
  })

  it('names the default projection of one entity', async () => {
    expect(context(await get(`Customers(${ada})`))).toBe('$metadata#Customers(Guid)/$entity')
    expect(context(await get(`Customers(${ada})?$select=Name&$expand=Orders($select=Number)`))).toBe('$metadata#Customers(Name,Orders(Number))/$entity')
  })
})

describe('valid writes the service does not make', () => {
  // POST through a navigation, $ref links and $batch are made: test/api/write-answers.test.ts, ref-writes.test.ts, batch.test.ts.
  it.each([
    ['DELETE', () => `Customers(${bob})/$ref`, () => undefined],
    ['PUT', () => `Customers(${ada})/Name`, () => ({ value: 'Eve' })],
    ['DELETE', () => `Customers(${ada})/City`, () => undefined],
    ['PATCH', () => `Orders(${orders[0]})/Customer`, () => ({ City: 'Oslo' })],
    ['PATCH', () => `Customers(${ada})/Orders(${orders[0]})`, () => ({ Number: 9 })],
    ['DELETE', () => `Customers(${ada})/Orders(${orders[0]})`, () => undefined],
  ])('%s %s is 501 with an OData error, and changes nothing', async (method, path, body) => {
    const answer = await call(`${api}/${path()}`, { method, token, body: body() })
    expect(answer.status).toBe(501)
    expect(answer.body.error.code).toBe('NotImplemented')
  })

  // A write to a property or its raw value is answered by its method, whatever its body: a raw
  // value is sent as text/plain, so 415 "must be application/json" would call a valid request wrong.
  it.each([
    ['PUT', 'Name/$value', 'text/plain', 'Eve', 501],
    ['PUT', 'Name/$value', 'application/json', '"Eve"', 501],
    ['DELETE', 'Name/$value', undefined, undefined, 501],
    ['PUT', 'Name', 'text/plain', 'Eve', 501],
    ['PATCH', 'Name/$value', 'text/plain', 'Eve', 405],
    ['POST', 'Name/$value', 'text/plain', 'Eve', 405],
    ['PATCH', 'Name', 'text/plain', 'Eve', 405],
    ['PATCH', 'Name', 'application/json', '{"value":"Eve"}', 405],
  ])('%s Customers(k)/%s with %s %s is %i, as every write to a property', async (method, path, type, body, status) => {
    const answer = await call(`${api}/Customers(${ada})/${path}`, { method, token, body, headers: type ? { 'Content-Type': type } : {} })
    expect(answer.status, answer.text).toBe(status)
    expect(answer.body.error.code).toBe(status === 501 ? 'NotImplemented' : 'MethodNotAllowed')
    if (status === 405) expect(answer.headers.get('allow')).toBe('GET')
  })

  it('left everything as it was', async () => {
    expect((await get(`Customers(${bob})/Name`)).body.value).toBe('Bob')
    expect((await get(`Customers(${ada})/Name`)).body.value).toBe('Ada')
    expect((await get(`Orders(${orders[0]})/Customer/$ref`)).body['@odata.id']).toBe(`Customers(${ada})`)
    expect((await get(`Customers(${ada})/Orders/$count`)).text).toBe('3')
  })

  it.each([
    ['GET', '$crossjoin(Customers,Orders)', undefined, undefined],
    ['GET', '$all', undefined, undefined],
    ['GET', 'Customers?$index=1', undefined, undefined],
  ])('%s %s (valid OData the service lacks) is 501, not 404, 405 or 415', async (method, path, type, body) => {
    const answer = await call(`${api}/${path}`, { method, token, body, headers: type ? { 'Content-Type': type } : {} })
    expect(answer.status, answer.text).toBe(501)
    expect(answer.body.error.code).toBe('NotImplemented')
  })

  it('answers a second navigation with 501 and a wrong name after a navigation with 404', async () => {
    for (const path of [`Orders(${orders[0]})/Customer/Orders`, `Orders(${orders[0]})/Customer/Orders/$count`, `Customers(${ada})/Orders(${orders[0]})/Customer`]) {
      const answer = await get(path)
      expect(answer.status, path).toBe(501)
      expect(answer.body.error.code).toBe('NotImplemented')
    }
    expect((await get(`Orders(${orders[0]})/Customer/Ordres`)).status).toBe(404)
    expect((await get(`Customers(${ada})/Orders(${orders[0]})/Custmer`)).status).toBe(404)
  })

  it('still answers 405 to what OData does not define', async () => {
    expect((await call(`${api}/Customers/$count`, { method: 'POST', token, body: {} })).status).toBe(405)
  })
})
