// Reads planned once per shape and caller (server/odata/handlers/read-plans.ts): the plan
// takes the path's keys and the service root as parameters and nothing else, a read whose
// statement uses them any other way is compiled every time, and over HTTP a planned read
// answers for its own keys and host. (Plans follow access changes: test/auth/entity-access
// reads one URL as one user before and after a role change.)

import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AccessContext } from '../../server/auth/access-context.ts'
import { ReadPlans, type PlannedRead, type ReadInputs } from '../../server/odata/handlers/read-plans.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

const caller = (name: string) => ({ tenant: 't', userGuid: name }) as unknown as AccessContext
const READ = { range: { id: 0 }, select: [], virtuals: [], needs: [], expand: [], etag: true } as unknown as PlannedRead['read']

/** A compiler whose statement takes the key as $2 and the context URL as $1, counting its calls. */
function counting(statement: (inputs: ReadInputs) => Pick<PlannedRead, 'sql' | 'params'>) {
  const calls: ReadInputs[] = []
  const compile = (inputs: ReadInputs): PlannedRead => {
    calls.push(inputs)
    return { single: true, read: READ, context: `${inputs.root}$metadata#Customers/$entity`, ...statement(inputs) }
  }
  return { calls, compile }
}

const byKey = (inputs: ReadInputs) => ({ sql: 'select $1, $2, $3', params: [`${inputs.root}$metadata#Customers/$entity`, inputs.keys[0], 'DE'] })

describe('ReadPlans', () => {
  const a = randomUUID()
  const b = randomUUID()

  it('compiles a shape once when first read, twice when read again (the request, then made-up inputs), then never', () => {
    const plans = new ReadPlans()
    const user = caller('u1')
    const { calls, compile } = counting(byKey)
    const first = plans.read(user, 'entity Customer ?', { keys: [a], root: 'http://h1/api/' }, compile)
    expect(first.params).toEqual(['http://h1/api/$metadata#Customers/$entity', a, 'DE'])
    expect(calls).toHaveLength(1)
    const second = plans.read(user, 'entity Customer ?', { keys: [b], root: 'http://h1/api/' }, compile)
    expect(second.params).toEqual(['http://h1/api/$metadata#Customers/$entity', b, 'DE'])
    expect(calls).toHaveLength(3)
    expect(calls[2].keys[0]).not.toBe(b)
    plans.read(user, 'entity Customer ?', { keys: [a], root: 'http://h1/api/' }, compile)
    expect(calls).toHaveLength(3)
    // Another access context (another user, or the same one after a change of roles) starts over.
    plans.read(caller('u1 again'), 'entity Customer ?', { keys: [b], root: 'http://h2/api/' }, compile)
    expect(calls).toHaveLength(4)
  })

  it('fills the keys and the root of later reads of the same caller into the plan', () => {
    const plans = new ReadPlans()
    const user = caller('u2')
    const { calls, compile } = counting(byKey)
    plans.read(user, 'entity Customer ?', { keys: [a], root: 'http://h1/api/' }, compile)
    plans.read(user, 'entity Customer ?', { keys: [a], root: 'http://h1/api/' }, compile)
    const later = plans.read(user, 'entity Customer ?', { keys: [b], root: 'https://h2/api/' }, compile)
    expect(calls).toHaveLength(3)
    expect(later).toMatchObject({ sql: 'select $1, $2, $3', params: ['https://h2/api/$metadata#Customers/$entity', b, 'DE'], single: true })
    expect(later.context).toBe('https://h2/api/$metadata#Customers/$entity')
  })

  it.each([
    ['in the statement text', (i: ReadInputs) => ({ sql: `select '${i.keys[0]}', $1`, params: [i.root] })],
    ['twice', (i: ReadInputs) => ({ sql: 'select $1, $2', params: [i.keys[0], i.keys[0]] })],
    ['in an array', (i: ReadInputs) => ({ sql: 'select $1', params: [[i.keys[0]]] })],
    ['transformed', (i: ReadInputs) => ({ sql: 'select $1', params: [i.keys[0].toUpperCase()] })],
  ])('compiles every time a shape whose statement uses a key %s', (_, statement) => {
    const plans = new ReadPlans()
    const user = caller('u3')
    const { calls, compile } = counting(statement)
    for (const key of [a, b, a, b]) expect(plans.read(user, 'shape', { keys: [key], root: 'http://h/api/' }, compile)).toMatchObject(statement({ keys: [key], root: 'http://h/api/' }))
    // The second read compiles twice (request, probe); the shape is then known as unplanned.
    expect(calls).toHaveLength(5)
  })

  it('plans nothing for a read without a caller, and keeps a failing compile out', () => {
    const plans = new ReadPlans()
    const { calls, compile } = counting(byKey)
    plans.read(undefined, 'shape', { keys: [a], root: 'http://h/api/' }, compile)
    plans.read(undefined, 'shape', { keys: [a], root: 'http://h/api/' }, compile)
    expect(calls).toHaveLength(2)
    const failing = () => {
      throw new Error('bad query')
    }
    expect(() => plans.read(caller('u4'), 'bad', { keys: [], root: 'http://h/api/' }, failing)).toThrow('bad query')
    expect(() => plans.read(caller('u4'), 'bad', { keys: [], root: 'http://h/api/' }, failing)).toThrow('bad query')
  })
})

describe('planned reads over HTTP', () => {
  let server: TestServer
  let token = ''
  const customers: string[] = []
  const orders: string[] = []

  beforeAll(async () => {
    server = await startTestServer()
    token = await server.token()
    for (const [name, city] of [['Ada Lovelace', 'London'], ['Grace Hopper', 'Arlington']]) {
      const created = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: name, City: city, Country: 'GB' } })
      expect(created.status, created.text).toBe(200)
      customers.push(created.body.Guid)
    }
    const product = await call(`${server.api}/Products`, { method: 'POST', token, body: { Code: 'PL1', Name: 'Planned', Price: 2.5 } })
    for (const [i, customer] of customers.entries()) {
      const order = await call(`${server.api}/Orders`, {
        method: 'POST',
        token,
        body: { Number: 7100 + i, 'Customer@odata.bind': `Customers(${customer})`, Lines: [{ 'Product@odata.bind': `Products(${product.body.Guid})`, Quantity: i + 1 }] },
      })
      expect(order.status, order.text).toBe(200)
      orders.push(order.body.Guid)
    }
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('answers each key with its own entity, ETag and context URL of the host asked', async () => {
    const read = (base: string, key: string) => call(`${base}/Customers(${key})?$select=Name,City`, { token })
    const local = server.api.replace('127.0.0.1', 'localhost')
    const answers = [await read(server.api, customers[0]), await read(local, customers[1]), await read(server.api, customers[1])]
    expect(answers.map((answer) => [answer.status, answer.body.Name, answer.body.City])).toEqual([
      [200, 'Ada Lovelace', 'London'],
      [200, 'Grace Hopper', 'Arlington'],
      [200, 'Grace Hopper', 'Arlington'],
    ])
    expect(answers[1].body['@odata.context']).toMatch(/^http:\/\/localhost:\d+\/api\/\$metadata#Customers\(Name,City\)\/\$entity$/)
    expect(answers[2].body['@odata.context']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\//)
    expect(answers[0].headers.get('ETag')).toBe('W/"1"')
    expect((await read(server.api, randomUUID())).status).toBe(404)
  })

  it("answers a navigation from each parent with that parent's members", async () => {
    const lines = async (order: string) => (await call(`${server.api}/Orders(${order})/Lines?$select=Quantity`, { token })).body.value.map((l: { Quantity: number }) => l.Quantity)
    expect([await lines(orders[0]), await lines(orders[1]), await lines(orders[0])]).toEqual([[1], [2], [1]])
    const customerOf = async (order: string) => (await call(`${server.api}/Orders(${order})/Customer?$select=Name`, { token })).body.Name
    expect([await customerOf(orders[1]), await customerOf(orders[0])]).toEqual(['Grace Hopper', 'Ada Lovelace'])
  })

  it('still refuses what the query options get wrong, on every request', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await call(`${server.api}/Customers(${customers[0]})?$filter=City eq 'London'`, { token })
      expect(response.status).toBe(400)
      expect(response.body.error.message).toContain('apply to collections, not to a single entity')
    }
  })
})
