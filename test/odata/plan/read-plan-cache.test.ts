// Reads prepared once per shape and caller (server/odata/plan/read-plan-cache.ts): a cached
// read runs its statement again with the path's keys put where the compiler recorded them,
// and over HTTP a cached read answers for its own keys and host (the context URL is not in
// the statement). (Caches follow access changes: test/auth/entity-access reads one URL as one
// user before and after a role change.)

import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AccessContext } from '../../../server/auth/access-context.ts'
import { ReadPlanCache, type PreparedRead } from '../../../server/odata/plan/read-plan-cache.ts'
import { etagAt } from '../../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../../support/test-server.ts'

const caller = (name: string) => ({ tenant: 't', userGuid: name }) as unknown as AccessContext
const PLAN = { kind: 'entity' } as unknown as PreparedRead['plan']

/** A preparation whose statement takes the path key as $2, counting its calls. */
function counting(key: string, keySlots: number[] = [1]) {
  const calls: string[] = []
  const prepare = (): PreparedRead => {
    calls.push(key)
    return { plan: PLAN, contextPath: '$metadata#Customers/$entity', statement: { sql: 'select $1, $2', params: ['DE', key], keySlots } }
  }
  return { calls, prepare }
}

describe('ReadPlanCache', () => {
  const a = randomUUID()
  const b = randomUUID()

  it('prepares a shape once per caller and puts the keys of later reads in the recorded places', () => {
    const cache = new ReadPlanCache()
    const user = caller('u1')
    const first = counting(a)
    expect(cache.read(user, 'entity Customer ?', [a], first.prepare).statement.params).toEqual(['DE', a])
    const later = counting(b)
    const second = cache.read(user, 'entity Customer ?', [b], later.prepare)
    expect(later.calls).toHaveLength(0)
    expect(second.statement).toEqual({ sql: 'select $1, $2', params: ['DE', b], keySlots: [1] })
    expect(second.contextPath).toBe('$metadata#Customers/$entity')
    // The cached statement is not changed by a later read's keys.
    expect(cache.read(user, 'entity Customer ?', [a], later.prepare).statement.params).toEqual(['DE', a])
    // Another access context (another user, or the same one after a change of roles) starts over.
    cache.read(caller('u1 again'), 'entity Customer ?', [b], later.prepare)
    expect(later.calls).toHaveLength(1)
  })

  it('prepares every time a shape whose statement does not take each path key as a parameter', () => {
    const cache = new ReadPlanCache()
    const user = caller('u2')
    const { calls, prepare } = counting(a, [])
    cache.read(user, 'shape', [a], prepare)
    cache.read(user, 'shape', [a], prepare)
    expect(calls).toHaveLength(2)
  })

  it('keeps nothing for a read without a caller, nor a failing preparation', () => {
    const cache = new ReadPlanCache()
    const { calls, prepare } = counting(a)
    cache.read(undefined, 'shape', [a], prepare)
    cache.read(undefined, 'shape', [a], prepare)
    expect(calls).toHaveLength(2)
    const failing = (): PreparedRead => {
      throw new Error('bad query')
    }
    expect(() => cache.read(caller('u4'), 'bad', [], failing)).toThrow('bad query')
    expect(() => cache.read(caller('u4'), 'bad', [], failing)).toThrow('bad query')
  })
})

describe('cached reads over HTTP', () => {
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

  it('answers each key with its own entity, ETag and context URL of the host asked, the first read included', async () => {
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
    expect(answers[0].headers.get('ETag')).toMatch(etagAt(1))
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
