// A refused write writes nothing (issue #16): every kind of write (POST, PATCH, PUT, DELETE, a
// bound and a static action), refused for each reason a write can be refused before it writes
// (reply options naming nothing, a failed If-Match, a missing permission, an invalid body),
// outside a workflow and inside one (then committed). The proof is the database itself: a hash
// of every row of every entity table of the tenant, taken before and after, must not move.
// Where a reason cannot apply to a kind of write it is left out, and the table says why.

import { fileURLToPath } from 'node:url'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tenantPool } from '../auth/helpers.ts'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'
import { tablesHash as tableHashOf } from '../support/table-hash.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1', fullAccess: false }
/** The plugins' tables (test/api/plugins): what a write could change. */
const TABLES = ['Customer', 'Product', 'Order', 'OrderLine', 'Tally', 'Shelf']

let server: TestServer
let pool: pg.Pool
let admin: string
let clerk: string
let data: { customer: string; order: string; tally: string }

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins', import.meta.url)), users: [ADMIN, CLERK] })
  pool = tenantPool(server)
  admin = await server.token()
  clerk = await server.token(undefined, CLERK.username, CLERK.password)
  const post = async (path: string, body: unknown) => {
    const answer = await call(`${server.api}/${path}`, { method: 'POST', token: admin, body })
    expect(answer.status, answer.text).toBe(200)
    return answer.body.Guid as string
  }
  const customer = await post('Customers', { Name: 'Refused' })
  const product = await post('Products', { Code: 'R-1', Name: 'Widget', Category: 'Tools', Price: 10 })
  const order = await post('Orders', { Number: 1, 'Customer@odata.bind': `Customers(${customer})`, Lines: [{ 'Product@odata.bind': `Products(${product})`, Quantity: 2 }] })
  data = { customer, order, tally: await post('Tallies', { Count: 1 }) }
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

/** Every row of every entity table, as one hash. */
const tablesHash = () => tableHashOf(pool, TABLES)

type Reason = 'reply options' | 'precondition' | 'permission' | 'body'

interface Write {
  readonly name: string
  readonly method: string
  readonly path: () => string
  readonly body?: unknown
  /** The request refused for each reason that can apply to it; absent: why it cannot. */
  readonly refused: Record<Reason, { query?: string; body?: unknown; headers?: Record<string, string>; status: number } | string>
}

const STALE = { 'If-Match': 'W/"999"' }
const WRITES: readonly Write[] = [
  {
    name: 'POST',
    method: 'POST',
    path: () => 'Customers',
    body: { Name: 'New' },
    refused: {
      'reply options': { query: '$expand=Nope', status: 400 },
      precondition: 'If-Match preconditions an existing entity; a create has none',
      permission: { status: 403 },
      body: { body: { Name: 'New', CreditLimit: 'lots' }, status: 400 },
    },
  },
  ...(['PATCH', 'PUT'] as const).map(
    (method): Write => ({
      name: method,
      method,
      path: () => `Customers(${data.customer})`,
      body: { Name: 'Changed', City: method === 'PUT' ? 'Bergen' : 'Oslo' },
      refused: {
        'reply options': { query: '$select=Nope', status: 400 },
        precondition: { headers: STALE, status: 412 },
        permission: { status: 403 },
        body: { body: { Name: 'Changed', Colour: 'red' }, status: 400 },
      },
    }),
  ),
  {
    name: 'DELETE (cascading to the lines)',
    method: 'DELETE',
    path: () => `Orders(${data.order})`,
    refused: {
      'reply options': { query: '$expand=Nope', status: 400 },
      precondition: { headers: STALE, status: 412 },
      permission: { status: 403 },
      body: 'a DELETE has no body',
    },
  },
  {
    name: 'a bound action (Tallies(…)/Bump)',
    method: 'POST',
    path: () => `Tallies(${data.tally})/Bump`,
    body: {},
    refused: {
      'reply options': { query: '$expand=Nope', status: 400 },
      precondition: { headers: STALE, status: 412 },
      permission: { status: 403 },
      body: { body: { by: 2 }, status: 400 },
    },
  },
  {
    name: 'a static action (Products/Reprice)',
    method: 'POST',
    path: () => 'Products/Reprice',
    body: { category: 'Tools', percent: 10 },
    refused: {
      'reply options': { query: '$select=Price', status: 400 },
      precondition: 'a static action is called on no entity, so there is no ETag to match',
      permission: { status: 403 },
      body: { body: { category: 'Tools', percent: 'ten' }, status: 400 },
    },
  },
]

const REASONS: readonly Reason[] = ['reply options', 'precondition', 'permission', 'body']

function requestOf(write: Write, reason: Reason) {
  const refused = write.refused[reason]
  if (typeof refused === 'string') return undefined
  const path = `${write.path()}${refused.query ? `?${refused.query}` : ''}`
  return { path, body: refused.body ?? write.body, headers: refused.headers ?? {}, token: reason === 'permission' ? clerk : admin, status: refused.status }
}

for (const write of WRITES) {
  describe(`${write.name}, refused, writes nothing`, () => {
    for (const reason of REASONS) {
      const cannot = write.refused[reason]
      if (typeof cannot === 'string') {
        it.skip(`for ${reason}: not applicable, ${cannot}`, () => {})
        continue
      }
      it(`for ${reason}`, async () => {
        const request = requestOf(write, reason)!
        const before = await tablesHash()
        const answer = await call(`${server.api}/${request.path}`, { method: write.method, token: request.token, body: request.body, headers: request.headers })
        expect(answer.status, answer.text).toBe(request.status)
        expect(await tablesHash()).toBe(before)
      })

      it(`for ${reason}, inside a workflow, and after its commit`, async () => {
        const request = requestOf(write, reason)!
        const before = await tablesHash()
        const workflow = await WorkflowClient.start(server.api, request.token)
        const answer = await workflow.send(write.method, request.path, request.body, request.headers)
        expect(answer.status, answer.text).toBe(request.status)
        expect(workflow.index).toBe(0)
        expect(await tablesHash()).toBe(before)
        expect((await workflow.commit()).status).toBe(200)
        expect(await tablesHash()).toBe(before)
      })
    }
  })
}

describe('the same writes, accepted, do change the tables (the hash can move)', () => {
  it('each of them', async () => {
    for (const write of WRITES) {
      const before = await tablesHash()
      const answer = await call(`${server.api}/${write.path()}`, { method: write.method, token: admin, body: write.body })
      expect(answer.status, `${write.name}: ${answer.text}`).toBeLessThan(300)
      expect(await tablesHash(), write.name).not.toBe(before)
    }
  })
})
