// An entity type the caller may not read is not read in any way (README, "Users, roles and
// personal access tokens"): route-permissions.test.ts sends each route once per navigation;
// here a clerk who reads orders, not customers, tries the paths that reach a customer
// indirectly — nested options, $it, parameter aliases, lambdas inside lambdas, method results
// and their options, write replies, $batch references to an earlier part, a workflow — and a
// bookkeeper who may change customers, not read them, tries reading one back through a change.
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'
import { cli, tokens } from './helpers.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1' }
const BOOKKEEPER = { username: 'bookkeeper', password: 'bookkeeper-password-1' }
const PLUGINS = fileURLToPath(new URL('./fixtures/plugins-unreadable', import.meta.url))
const FORBIDDEN = /needs the read permission on Customer, which your responsibilities do not grant\.$/

let server: TestServer
let admin: string
let clerk: string
let bookkeeper: string
let customer: string
let order: string

const api = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${server.api}/${path}`, init)
const run = async (...args: string[]) => expect((await cli(server.configPath, ...args, '--tenant', server.tenants[0])).code, args.join(' ')).toBe(0)

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: PLUGINS, users: [ADMIN, CLERK, BOOKKEEPER] })
  await run('role', 'add', 'Clerks')
  await run('role', 'grant', 'Clerks', 'WorkOrders')
  await run('user', 'grant-role', '--username', CLERK.username, '--role', 'Clerks')
  await run('role', 'add', 'Bookkeepers')
  await run('role', 'grant', 'Bookkeepers', 'UpdateCustomers')
  await run('user', 'grant-role', '--username', BOOKKEEPER.username, '--role', 'Bookkeepers')
  admin = (await tokens(server)).accessToken
  clerk = (await tokens(server, CLERK.username, CLERK.password)).accessToken
  bookkeeper = (await tokens(server, BOOKKEEPER.username, BOOKKEEPER.password)).accessToken
  customer = (await api('Customers', { method: 'POST', token: admin, body: { Code: 'ACME', Name: 'Acme Secret', CreditLimit: 5000 } })).body.Guid
  order = (await api('Orders', { method: 'POST', token: admin, body: { Number: 1, Note: 'first', 'Customer@odata.bind': `Customers(${customer})`, Lines: [{ Text: 'one' }] } })).body.Guid
})
afterAll(async () => {
  await server?.stop()
})

describe('a clerk who reads orders, not customers', () => {
  it('gets 403 for every read that passes through a customer, however indirectly', async () => {
    const reads = [
      `Orders?$filter=Customer/CreditLimit gt 1000`,
      `Orders?$filter=$it/Customer/Name eq 'Acme Secret'`,
      `Orders?$filter=$this/Customer/Name eq 'Acme Secret'`,
      `Orders?$filter=@a eq 'Acme Secret'&@a=Customer/Name`,
      `Orders?$orderby=@a&@a=Customer/Name`,
      `Orders?$filter=cast(Customer/Name,Edm.String) eq 'Acme Secret'`,
      `Orders?$filter=Customer/Guid eq ${customer}`,
      `Orders?$filter=Customer/Orders/any(o: o/Number eq 1)`,
      `Orders?$filter=Customer/Orders/$count gt 0`,
      `Orders?$filter=Lines/any(l: l/Order/Customer/Name eq 'Acme Secret')`,
      `Orders?$filter=Lines/$count($filter=Order/Customer/Name eq 'Acme Secret') gt 0`,
      `Orders?$apply=groupby((Number),aggregate(Customer/CreditLimit with sum as Total))`,
      `Orders?$apply=compute(Customer/Name as Buyer)/groupby((Buyer))`,
      `Orders?$apply=filter(Customer/Name eq 'Acme Secret')/aggregate($count as Count)`,
      `Orders?$apply=orderby(Customer/Name)/top(1)`,
      `Orders?$compute=Customer/Name as Buyer&$select=Number&$filter=Buyer eq 'Acme Secret'`,
      `Orders?$expand=*/$ref`,
      `Orders?$expand=Lines($filter=$it/Customer/Name eq 'Acme Secret')`,
      `Orders?$expand=Lines($orderby=$it/Customer/Name)`,
      `Orders?$expand=Lines($compute=$it/Customer/Name as Buyer)`,
      `Orders?$expand=Lines($expand=Order($expand=Customer))`,
      `Orders?$expand=Lines($expand=Order($select=Customer/Name))`,
      `Lines?$select=Order/Customer/Name`,
      `Orders(${order})?$compute=Customer/Name as Buyer`,
      `Orders(${order})/Customer/Name/$value`,
      `Orders(${order})/Customer/$ref`,
      `Customers(${customer})/Orders/$count`,
      `Customers(${customer})/Orders(${order})/Siblings()`,
      `Orders(${order})/Buyer()`,
      `Orders(${order})/Siblings()?$expand=Customer`,
      `Orders(${order})/Siblings()?$filter=Customer/Name eq 'Acme Secret'`,
      `Orders(${order})/Siblings()?$orderby=Customer/CreditLimit`,
    ]
    for (const path of reads) {
      const response = await api(path, { token: clerk })
      expect(response.status, `${path}: ${response.text}`).toBe(403)
      expect(response.body.error.message, path).toMatch(FORBIDDEN)
    }
  })

  it('reads what is the order’s own: its reference’s key, and a search that looks at orders alone', async () => {
    const own = await api(`Orders?$filter=CustomerGuid eq ${customer} and Customer ne null&$select=Number,CustomerGuid`, { token: clerk })
    expect(own.status, own.text).toBe(200)
    expect(own.body.value).toEqual([expect.objectContaining({ Number: 1, CustomerGuid: customer })])
    // The customer's searchable name is not the order's: a search for it finds no order.
    const searched = await api('Orders?$search=Acme&$count=true', { token: clerk })
    expect(searched.status, searched.text).toBe(200)
    expect(searched.body['@odata.count']).toBe(0)
    expect((await api(`Orders(${order})/Siblings()?$select=Number`, { token: clerk })).body.value).toEqual([expect.objectContaining({ Number: 1 })])
  })

  it('gets 403 for a write whose reply would pass through a customer, and nothing is written', async () => {
    const writes: [string, string, unknown][] = [
      ['POST', 'Orders?$select=Customer/Name', { Number: 2 }],
      ['POST', 'Orders?$compute=Customer/Name as Buyer', { Number: 2 }],
      ['PATCH', `Orders(${order})?$select=Customer/Name`, { Note: 'changed' }],
      ['PATCH', `Orders(${order})?$compute=Customer/Name as Buyer`, { Note: 'changed' }],
      ['POST', `Orders(${order})/Lines?$expand=Order($expand=Customer)`, { Text: 'two' }],
      ['POST', `Orders(${order})/Touch?$select=Customer/Name`, {}],
    ]
    for (const [method, path, body] of writes) {
      const response = await api(path, { method, token: clerk, body })
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(403)
      expect(response.body.error.message, path).toMatch(FORBIDDEN)
    }
    const after = await api(`Orders?$select=Number,Note&$expand=Lines($select=Text)`, { token: admin })
    expect(after.body.value).toEqual([expect.objectContaining({ Number: 1, Note: 'first', Lines: [expect.objectContaining({ Text: 'one' })] })])
  })

  it('gets 403 in a $batch part that reaches a customer through an earlier part, and in a workflow', async () => {
    const batch = await api('$batch', {
      method: 'POST',
      token: clerk,
      body: {
        requests: [
          { id: '1', method: 'POST', url: 'Orders', body: { Number: 3 }, atomicityGroup: 'g' },
          { id: '2', method: 'GET', url: '$1/Customer', dependsOn: ['g'] },
          { id: '3', method: 'GET', url: '$1?$expand=Customer', dependsOn: ['g'] },
          { id: '4', method: 'GET', url: `Customers(${customer})`, headers: { Authorization: `Bearer ${admin}` } },
        ],
      },
    })
    expect(batch.status, batch.text).toBe(200)
    const statuses = Object.fromEntries(batch.body.responses.map((part: { id: string; status: number }) => [part.id, part.status]))
    expect(statuses).toEqual({ 1: 200, 2: 403, 3: 403, 4: 403 })
    const workflow = await WorkflowClient.start(server.api, clerk)
    try {
      const read = await workflow.get(`Orders?$filter=Customer/Name eq 'Acme Secret'`)
      expect(read.status, read.text).toBe(403)
      expect(read.body.error.message).toMatch(FORBIDDEN)
    } finally {
      expect((await workflow.abort()).status).toBe(200)
    }
  })
})

describe('a clerk deleting an order whose line a shipment keeps', () => {
  // The line goes with the order by cascade; the clerk named the order, not the line, and may
  // not read shipments: the refusal names the line by its way from the order, not by its key.
  let kept: string
  let line: string
  beforeAll(async () => {
    kept = (await api('Orders', { method: 'POST', token: admin, body: { Number: 5, Lines: [{ Text: 'shipped' }] } })).body.Guid
    line = (await api(`Orders(${kept})/Lines`, { token: admin })).body.value[0].Guid
    const shipped = await api('Shipments', { method: 'POST', token: admin, body: { Carrier: 'Post', 'Line@odata.bind': `Lines(${line})` } })
    expect(shipped.status, shipped.text).toBe(200)
  })
  const REFUSED = () => `Order ${kept} cannot be deleted: its Lines, deleted with it, still have Shipments, which keep them from being deleted; delete or move those first.`

  it('learns that shipments keep its lines, not which line', async () => {
    const refused = await api(`Orders(${kept})`, { method: 'DELETE', token: clerk })
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body.error.message).toBe(REFUSED())
    expect(refused.text).not.toContain(line)
  })

  it('learns the same in a $batch and in a workflow', async () => {
    const batch = await api('$batch', { method: 'POST', token: clerk, body: { requests: [{ id: '1', method: 'DELETE', url: `Orders(${kept})` }] } })
    expect(batch.status, batch.text).toBe(200)
    expect(batch.body.responses[0].status).toBe(409)
    expect(batch.body.responses[0].body.error.message).toBe(REFUSED())
    const workflow = await WorkflowClient.start(server.api, clerk)
    try {
      const refused = await workflow.send('DELETE', `Orders(${kept})`)
      expect(refused.status, refused.text).toBe(409)
      expect(refused.body.error.message).toBe(REFUSED())
    } finally {
      expect((await workflow.abort()).status).toBe(200)
    }
  })

  it('learns, through a method that deletes an order it did not name, neither the order nor the line', async () => {
    const refused = await api('Orders/Purge', { method: 'POST', token: clerk, body: { number: 5 } })
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body.error.message).toBe('Order.Purge deletes an entity of Order whose Lines, deleted with it, still have Shipments, which keep them from being deleted; delete or move those first.')
    expect(refused.text).not.toContain(kept)
    expect(refused.text).not.toContain(line)
    expect((await api(`Orders(${kept})/Lines/$count`, { token: admin })).text).toBe('1')
  })

  it('learns, when the kept row is further down, the way to it: its lines\' parts', async () => {
    const deep = (await api('Orders', { method: 'POST', token: admin, body: { Number: 6, Lines: [{ Text: 'boxed', Parts: [{ Name: 'box' }] }] } })).body.Guid
    const part = (await api(`Parts?$filter=Line/Order/Guid eq ${deep}`, { token: admin })).body.value[0].Guid
    expect((await api('Reservations', { method: 'POST', token: admin, body: { 'Part@odata.bind': `Parts(${part})` } })).status).toBe(200)
    const refused = await api(`Orders(${deep})`, { method: 'DELETE', token: clerk })
    expect(refused.status, refused.text).toBe(409)
    expect(refused.body.error.message).toBe(`Order ${deep} cannot be deleted: its Lines' Parts, deleted with it, still have Reservations, which keep them from being deleted; delete or move those first.`)
    expect(refused.text).not.toContain(part)
  })
})

describe('a bookkeeper who changes customers and may not read them', () => {
  it('changes one, answered without it', async () => {
    const changed = await api(`Customers(${customer})`, { method: 'PATCH', token: bookkeeper, body: { CreditLimit: 6000 } })
    expect(changed.status, changed.text).toBe(204)
    expect(changed.text).toBe('')
    const minimal = await api(`Customers(${customer})?$select=Name`, { method: 'PATCH', token: bookkeeper, body: {}, headers: { Prefer: 'return=minimal' } })
    expect(minimal.status, minimal.text).toBe(204)
  })

  it('gets 403 asking a change to answer with the customer, which would read it, and nothing is written', async () => {
    for (const [path, headers] of [
      [`Customers(${customer})?$select=Name,CreditLimit`, {}],
      [`Customers(${customer})`, { Prefer: 'return=representation' }],
    ] as const) {
      const response = await api(path, { method: 'PATCH', token: bookkeeper, body: { CreditLimit: 7000 }, headers })
      expect(response.status, `${path}: ${response.text}`).toBe(403)
      expect(response.body.error.message, path).toBe(`Answering a change of Customers with the entity needs the read permission on Customer, which your responsibilities do not grant.`)
    }
    expect((await api(`Customers(${customer})?$select=CreditLimit`, { token: admin })).body.CreditLimit).toBe(6000)
  })
})
