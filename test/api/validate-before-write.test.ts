// A write is validated whole before anything is written (issue #15): its reply options ($select,
// $expand and the rest), its If-Match and its body. A refused write changes nothing, in or out
// of a workflow, and its error answer carries none of the success path's headers.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'

const pluginsDir = fileURLToPath(new URL('./plugins', import.meta.url))
const SUCCESS_HEADERS = ['location', 'odata-entityid', 'etag', 'preference-applied']

let server: TestServer
let token: string
let api: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir })
  token = await server.token()
  api = server.api
})
afterAll(async () => server?.stop())

type Answer = Awaited<ReturnType<typeof call>>
type Send = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>

const send: Send = (method, path, body, headers) => call(`${api}/${path}`, { method, token, body, headers })
const get = (path: string) => send('GET', path)

async function created(path: string, body: unknown): Promise<any> {
  const answer = await send('POST', `${path}?$select=*`, body)
  expect(answer.status, answer.text).toBe(200)
  return answer.body
}

/** What a case checks afterwards: the rows it could have changed, as the database has them. */
type Snapshot = () => Promise<unknown>

interface RefusedCase {
  readonly name: string
  readonly status: number
  readonly code: string
  /** Creates what the request needs; returns the request and how to read what it must leave alone. */
  readonly prepare: (tag: string) => Promise<{ method: string; path: string; body?: unknown; headers?: Record<string, string>; snapshot: Snapshot }>
}

const customerCount = (name: string) => async () => (await get(`Customers/$count?$filter=Name eq '${name}'`)).text
const customerRead = (guid: string) => async () => {
  const answer = await get(`Customers(${guid})?$select=Name,City`)
  return { status: answer.status, body: answer.body, etag: answer.headers.get('etag') }
}

const REFUSED: readonly RefusedCase[] = [
  ...['$expand=Nope', '$select=Nope', "$filter=Name eq 'x'", '$top=1'].map(
    (query): RefusedCase => ({
      name: `POST with ${query}`,
      status: 400,
      code: 'InvalidQuery',
      prepare: async (tag) => ({ method: 'POST', path: `Customers?${query}`, body: { Name: tag }, snapshot: customerCount(tag) }),
    }),
  ),
  {
    name: 'POST with Prefer: return=minimal and $expand=Nope',
    status: 400,
    code: 'InvalidQuery',
    prepare: async (tag) => ({ method: 'POST', path: 'Customers?$expand=Nope', body: { Name: tag }, headers: { Prefer: 'return=minimal' }, snapshot: customerCount(tag) }),
  },
  {
    name: 'POST with an invalid body',
    status: 400,
    code: 'ValidationFailed',
    prepare: async (tag) => ({ method: 'POST', path: 'Customers', body: { Name: tag, CreditLimit: 'lots' }, snapshot: customerCount(tag) }),
  },
  ...(['PATCH', 'PUT'] as const).flatMap((method): RefusedCase[] => [
    ...['$expand=Nope', '$select=Nope', '$orderby=Name'].map(
      (query): RefusedCase => ({
        name: `${method} with ${query}`,
        status: 400,
        code: 'InvalidQuery',
        prepare: async (tag) => {
          const { Guid } = await created('Customers', { Name: tag, City: 'Before' })
          return { method, path: `Customers(${Guid})?${query}`, body: { Name: tag, City: 'After' }, snapshot: customerRead(Guid) }
        },
      }),
    ),
    {
      name: `${method} with a stale If-Match`,
      status: 412,
      code: 'PreconditionFailed',
      prepare: async (tag) => {
        const { Guid } = await created('Customers', { Name: tag, City: 'Before' })
        return { method, path: `Customers(${Guid})?$select=City`, body: { Name: tag, City: 'After' }, headers: { 'If-Match': 'W/"7"' }, snapshot: customerRead(Guid) }
      },
    },
    {
      name: `${method} with an If-Match that is not an entity tag`,
      status: 400,
      code: 'InvalidRequest',
      prepare: async (tag) => {
        const { Guid } = await created('Customers', { Name: tag, City: 'Before' })
        return { method, path: `Customers(${Guid})`, body: { Name: tag, City: 'After' }, headers: { 'If-Match': 'version one' }, snapshot: customerRead(Guid) }
      },
    },
    {
      name: `${method} with an invalid body`,
      status: 400,
      code: 'ValidationFailed',
      prepare: async (tag) => {
        const { Guid } = await created('Customers', { Name: tag, City: 'Before' })
        return { method, path: `Customers(${Guid})`, body: { Name: tag, City: 'After', Colour: 'red' }, snapshot: customerRead(Guid) }
      },
    },
  ]),
  ...['$expand=Nope', '$select=Nope'].map(
    (query): RefusedCase => ({
      name: `DELETE with ${query}`,
      status: 400,
      code: 'InvalidQuery',
      prepare: async (tag) => {
        const { Guid } = await created('Customers', { Name: tag })
        return { method: 'DELETE', path: `Customers(${Guid})?${query}`, snapshot: customerRead(Guid) }
      },
    }),
  ),
  {
    name: 'DELETE with a stale If-Match',
    status: 412,
    code: 'PreconditionFailed',
    prepare: async (tag) => {
      const { Guid } = await created('Customers', { Name: tag })
      return { method: 'DELETE', path: `Customers(${Guid})`, headers: { 'If-Match': 'W/"7"' }, snapshot: customerRead(Guid) }
    },
  },
  {
    name: 'an action with no result, with $expand=Nope',
    status: 400,
    code: 'InvalidQuery',
    prepare: async (tag) => {
      const customer = await created('Customers', { Name: tag })
      const product = await created('Products', { Code: tag.slice(-12), Name: 'Widget', Price: 1 })
      const order = await created('Orders', {
        Number: Number.parseInt(tag.replace(/\D/g, '').slice(-9), 10),
        'Customer@odata.bind': `Customers(${customer.Guid})`,
        Lines: [{ 'Product@odata.bind': `Products(${product.Guid})`, Quantity: 1 }],
      })
      return { method: 'POST', path: `Orders(${order.Guid})/Close?$expand=Nope`, snapshot: async () => (await get(`Orders(${order.Guid})?$select=Status`)).body }
    },
  },
  ...['$expand=Nope', '$select=Nope'].map(
    (query): RefusedCase => ({
      name: `an action answering with an entity, with ${query}`,
      status: 400,
      code: 'InvalidQuery',
      prepare: async () => {
        const { Guid } = await created('Tallies', { Count: 1 })
        return { method: 'POST', path: `Tallies(${Guid})/Bump?${query}`, snapshot: async () => (await get(`Tallies(${Guid})?$select=Count`)).body }
      },
    }),
  ),
  {
    name: 'an action answering with entities, with $expand=Nope',
    status: 400,
    code: 'InvalidQuery',
    prepare: async () => {
      await created('Tallies', { Count: 1 })
      return { method: 'POST', path: 'Tallies/BumpAll?$expand=Nope', snapshot: async () => (await get('Tallies?$select=Count&$orderby=Guid')).body.value }
    },
  },
  {
    name: 'an action with an invalid parameter',
    status: 400,
    code: 'InvalidParameter',
    prepare: async (tag) => {
      const product = await created('Products', { Code: tag.slice(-12), Name: 'Widget', Category: tag, Price: 10 })
      return { method: 'POST', path: 'Products/Reprice', body: { category: tag, percent: 'ten' }, snapshot: async () => (await get(`Products(${product.Guid})?$select=Price`)).body }
    },
  },
]

let counter = 0
const uniqueTag = () => `Refused ${Date.now()}${String(++counter).padStart(3, '0')}`

function expectRefused(answer: Answer, refused: RefusedCase): void {
  expect(answer.status, answer.text).toBe(refused.status)
  expect(answer.body.error.code).toBe(refused.code)
  for (const header of SUCCESS_HEADERS) expect(answer.headers.get(header), header).toBeNull()
}

describe('a refused write changes nothing and carries no success headers', () => {
  for (const refused of REFUSED) {
    it(refused.name, async () => {
      const request = await refused.prepare(uniqueTag())
      const before = await request.snapshot()
      expectRefused(await send(request.method, request.path, request.body, request.headers), refused)
      expect(await request.snapshot()).toEqual(before)
    })
  }
})

describe('inside a workflow, a refused write changes nothing, there or after the commit', () => {
  for (const refused of REFUSED) {
    it(refused.name, async () => {
      const request = await refused.prepare(uniqueTag())
      const before = await request.snapshot()
      const workflow = await WorkflowClient.start(api, token)
      expectRefused(await workflow.send(request.method, request.path, request.body, request.headers), refused)
      expect(workflow.index).toBe(0)
      expect((await workflow.commit()).status).toBe(200)
      expect(await request.snapshot()).toEqual(before)
    })
  }
})

describe('a reply whose statement fails on the data, which binding cannot foresee', () => {
  // Each line's quantity, multiplied past the range of Edm.Int32, fails when the reply's read
  // runs: binding cannot see the values (a cast that cannot convert is null, not an error).
  const failingFilter = 'Quantity mul 2147483647 mul 2147483647 eq 1'
  const failingReply = `Orders?$expand=Lines($filter=${failingFilter})`
  const order = async (number: number) => {
    const customer = await created('Customers', { Name: `Reply ${number}` })
    const product = await created('Products', { Code: `R${number}`, Name: 'Widget', Price: 1 })
    return { Number: number, 'Customer@odata.bind': `Customers(${customer.Guid})`, Lines: [{ 'Product@odata.bind': `Products(${product.Guid})`, Quantity: 1 }] }
  }
  const ordersNumbered = async (number: number) => (await get(`Orders/$count?$filter=Number eq ${number}`)).text

  it('outside a workflow: the error, and nothing saved (the reply is read in the write\'s transaction)', async () => {
    const answer = await send('POST', failingReply, await order(880001))
    expect(answer.status, answer.text).toBe(400)
    expect(answer.headers.get('location')).toBeNull()
    expect(await ordersNumbered(880001)).toBe('0')
  })

  it('the same reply on a PATCH: the error, and the change not saved', async () => {
    const created = await send('POST', 'Orders?$expand=Lines($select=Guid)', await order(880003))
    expect(created.status, created.text).toBe(200)
    const path = `Orders(${created.body.Guid})?$expand=Lines($filter=${failingFilter})`
    const read = async () => (await get(`Orders(${created.body.Guid})?$select=OrderDate`)).body
    const before = await read()
    const answer = await send('PATCH', path, { OrderDate: '2020-02-01' })
    expect(answer.status, answer.text).toBe(400)
    expect(await read()).toEqual(before)
    expect(before.OrderDate).not.toBe('2020-02-01')
  })

  it('inside a workflow, where nothing is saved yet: the error, and nothing after the commit', async () => {
    const body = await order(880002)
    const workflow = await WorkflowClient.start(api, token)
    const answer = await workflow.send('POST', failingReply, body)
    expect(answer.status).toBe(400)
    expect(answer.headers.get('location')).toBeNull()
    expect((await workflow.commit()).status).toBe(200)
    expect(await ordersNumbered(880002)).toBe('0')
  })

  it("a modify method's too: the error, and its changes not saved, in a workflow or not", async () => {
    const tally = await created('Tallies', { Count: 100, Label: 'not a number' })
    const count = async () => (await get(`Tallies(${tally.Guid})?$select=Count`)).body.Count
    const failing = `Tallies/BumpAll?$filter=${encodeURIComponent('Count mul 2147483647 mul 2147483647 eq 1')}`
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('POST', failing)).status).toBe(400)
    expect((await workflow.commit()).status).toBe(200)
    expect(await count()).toBe(100)
    const answer = await send('POST', failing)
    expect(answer.status, answer.text).toBe(400)
    expect(await count()).toBe(100)
  })
})

describe('the same writes, well formed, still succeed', () => {
  it('POST answers with its Location; PATCH, DELETE and the actions change what they should', async () => {
    const posted = await send('POST', 'Customers?$select=Name&$expand=Orders', { Name: 'Accepted' })
    expect(posted.status).toBe(200)
    expect(posted.headers.get('location')).toContain(`Customers(${posted.body.Guid})`)
    expect(posted.body).toMatchObject({ Name: 'Accepted', Orders: [] })
    const patched = await send('PATCH', `Customers(${posted.body.Guid})?$select=City`, { City: 'Turin' }, { 'If-Match': `${posted.headers.get('etag')}, W/"9"` })
    expect(patched.status).toBe(200)
    expect(patched.body.City).toBe('Turin')
    expect(patched.headers.get('etag')).toMatch(etagAt(2))
    const tally = await created('Tallies', { Count: 5 })
    const bumped = await send('POST', `Tallies(${tally.Guid})/Bump?$select=Count`)
    expect(bumped.status).toBe(200)
    expect(bumped.body.Count).toBe(6)
    const all = await send('POST', 'Tallies/BumpAll?$select=Count&$filter=Count eq 7')
    expect(all.status).toBe(200)
    expect(all.body.value).toEqual([expect.objectContaining({ Count: 7 })])
    expect((await send('DELETE', `Customers(${posted.body.Guid})`, undefined, { 'If-Match': '*' })).status).toBe(204)
  })
})

describe('a query option only a collection takes', () => {
  it.each([
    ['PATCH', '$filter', "$filter=Name eq 'x'"],
    ['PATCH', '$top', '$top=1'],
    ['PUT', '$orderby', '$orderby=Name'],
    ['POST', '$skip', '$skip=1'],
    ['POST', '$count', '$count=true'],
  ])('%s with %s is refused with the option as its target', async (method, option, query) => {
    const { Guid } = await created('Customers', { Name: `target ${option}` })
    const answer = await send(method, method === 'POST' ? `Customers?${query}` : `Customers(${Guid})?${query}`, { Name: `target ${option}` })
    expect(answer.status, answer.text).toBe(400)
    expect(answer.body.error.code).toBe('InvalidQuery')
    expect(answer.body.error.target).toBe(option)
  })
})
