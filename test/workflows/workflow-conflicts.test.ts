// A workflow's commit against changes made outside it since (row versions): 409 naming what
// changed, nothing saved, the workflow still open. And an open workflow blocks nobody.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tenantPool } from '../auth/helpers.ts'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { saveSalesData, WorkflowClient } from './helpers.ts'

let server: TestServer
let token: string
let api: string

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
})
afterAll(async () => server?.stop())

const get = (path: string) => call(`${api}/${path}`, { token })
const outside = (method: string, path: string, body?: unknown) => call(`${api}/${path}`, { method, token, body })

describe('commit after a concurrent change', () => {
  it('is 409 naming the row changed outside, saves nothing, and leaves the workflow open', async () => {
    const data = await saveSalesData(api, token, 1)
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('POST', 'Customers', { Name: 'Saved with the workflow only' })).status).toBe(200)
    const changed = await workflow.send('PATCH', `OrderLines(${data.lines[0]})?$select=Quantity`, { Quantity: 4 })
    expect(changed.status).toBe(200)

    // Another client changes the same line, outside the workflow: it is not blocked.
    expect((await outside('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 6 })).status).toBe(204)

    const commit = await workflow.commit()
    expect(commit.status).toBe(409)
    expect(commit.body.error.code).toBe('Conflict')
    expect(commit.body.error.message).toContain(`request 2 of the workflow (PATCH /api/OrderLines(${data.lines[0]})?$select=Quantity)`)
    expect(commit.body.error.details).toContainEqual(
      expect.objectContaining({ target: `OrderLines(${data.lines[0]})`, message: expect.stringContaining('row version 1 when the workflow changed it, 2 now') }),
    )
    expect((await get(`OrderLines(${data.lines[0]})?$select=Quantity`)).body.Quantity).toBe(6)
    expect((await get(`Customers?$filter=Name eq 'Saved with the workflow only'&$count=true`)).body['@odata.count']).toBe(0)

    // Still open: the last answer can be asked for again, and it can be aborted.
    const retry = await workflow.at(workflow.index, 'PATCH', `OrderLines(${data.lines[0]})?$select=Quantity`, { Quantity: 4 })
    expect(retry.status).toBe(200)
    expect(retry.body.Quantity).toBe(4)
    expect((await workflow.abort()).status).toBe(200)
  })

  it('is 409 for the next request too, naming the row, before the commit', async () => {
    const data = await saveSalesData(api, token, 77)
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 4 })).status).toBe(204)
    expect((await outside('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 6 })).status).toBe(204)
    const next = await workflow.send('GET', `OrderLines(${data.lines[0]})?$select=Quantity`)
    expect(next.status).toBe(409)
    expect(next.body.error.message).toContain(`request 1 of the workflow (PATCH /api/OrderLines(${data.lines[0]}))`)
    expect(next.body.error.details).toContainEqual(
      expect.objectContaining({ target: `OrderLines(${data.lines[0]})`, message: expect.stringContaining('row version 1 when the workflow changed it, 2 now') }),
    )
    expect((await workflow.abort()).status).toBe(200)
  })

  it('is 409 too when the changed row is one the rules touched (the order of a changed line)', async () => {
    const data = await saveSalesData(api, token, 2)
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 5 })).status).toBe(204)
    const added = await outside('POST', 'OrderLines', { 'Order@odata.bind': `Orders(${data.order})`, 'Product@odata.bind': `Products(${data.products[0]})`, Quantity: 1 })
    expect(added.status).toBe(200)
    const commit = await workflow.commit()
    expect(commit.status).toBe(409)
    expect(commit.body.error.details).toContainEqual(expect.objectContaining({ target: `Orders(${data.order})` }))
    expect((await get(`OrderLines(${data.lines[0]})?$select=Quantity`)).body.Quantity).toBe(2)
    expect((await workflow.abort()).status).toBe(200)
  })

  it('is 409 when a request sent with If-Match no longer matches', async () => {
    const data = await saveSalesData(api, token, 3)
    const workflow = await WorkflowClient.start(api, token)
    const line = await workflow.get(`OrderLines(${data.lines[1]})`)
    const etag = line.headers.get('etag')!
    expect((await workflow.send('PATCH', `OrderLines(${data.lines[1]})`, { Quantity: 1 }, { 'If-Match': etag })).status).toBe(204)
    // Inside the workflow the row moved on: the old ETag no longer matches there either.
    expect((await workflow.send('PATCH', `OrderLines(${data.lines[1]})`, { Quantity: 2 }, { 'If-Match': etag })).status).toBe(412)
    expect((await outside('PATCH', `OrderLines(${data.lines[1]})`, { Quantity: 9 })).status).toBe(204)
    const commit = await workflow.commit()
    expect(commit.status).toBe(409)
    expect(commit.body.error.message).toContain(`request 2 of the workflow (PATCH /api/OrderLines(${data.lines[1]})) changes were changed outside`)
    expect((await get(`OrderLines(${data.lines[1]})?$select=Quantity`)).body.Quantity).toBe(9)
    expect((await workflow.abort()).status).toBe(200)
  })

  it('is 409 when a natural key the workflow creates was taken outside meanwhile', async () => {
    const data = await saveSalesData(api, token, 4)
    const workflow = await WorkflowClient.start(api, token)
    const order = { Number: 4444, 'Customer@odata.bind': `Customers(${data.customer})` }
    expect((await workflow.send('POST', 'Orders', order)).status).toBe(200)
    expect((await outside('POST', 'Orders', order)).status).toBe(200)
    const commit = await workflow.commit()
    expect(commit.status).toBe(409)
    expect(commit.body.error.code).toBe('Conflict')
    expect((await get(`Orders?$filter=Number eq 4444&$count=true`)).body['@odata.count']).toBe(1)
    // Every later request of the workflow replays the create, and meets the same conflict.
    expect((await workflow.get('Orders?$top=1')).status).toBe(409)
    expect((await workflow.abort()).status).toBe(200)
  })

  it('commits when the rows the workflow changed were left alone, even if others changed nearby', async () => {
    const data = await saveSalesData(api, token, 5)
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('PATCH', `Customers(${data.customer})`, { City: 'Basel' })).status).toBe(204)
    expect((await outside('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 7 })).status).toBe(204)
    expect((await workflow.commit()).status).toBe(200)
    expect((await get(`Customers(${data.customer})?$select=City`)).body.City).toBe('Basel')
    expect((await get(`OrderLines(${data.lines[0]})?$select=Quantity`)).body.Quantity).toBe(7)
  })
})

describe('a commit racing another write of its rows', () => {
  it('is 409 naming the rows the other write changed, as the next try would', async () => {
    const data = await saveSalesData(api, token, 8)
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('PATCH', `Customers(${data.customer})`, { City: 'Inside' })).status).toBe(204)
    // Another writer changes the customer and holds its row until the commit waits for it.
    const pool = tenantPool(server)
    const other = await pool.connect()
    try {
      await other.query('begin')
      await other.query(`update "Customer" set "City" = 'Outside', "_Version" = "_Version" + 1 where "Guid" = $1`, [data.customer])
      const commit = workflow.commit()
      // Watched from another connection: inside a transaction, pg_stat_activity stays as first read.
      for (;;) {
        const { rows } = await pool.query("select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")
        if (rows[0].waiting > 0) break
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await other.query('commit')
      const answer = await commit
      expect(answer.status, answer.text).toBe(409)
      expect(answer.body.error.message).toContain('changes were changed outside the workflow since')
      expect(answer.body.error.details).toContainEqual(
        expect.objectContaining({ target: `Customers(${data.customer})`, message: expect.stringContaining('row version 1 when the workflow changed it, 2 now') }),
      )
    } finally {
      other.release()
      await pool.end()
    }
    expect((await get(`Customers(${data.customer})?$select=City`)).body.City).toBe('Outside')
    expect((await workflow.abort()).status).toBe(200)
  })
})

describe('an ETag seen inside a workflow', () => {
  it('never matches a row written outside it, where the same version once meant other content', async () => {
    const customer = (await outside('POST', 'Customers', { Name: 'Tagged' })).body.Guid
    const workflow = await WorkflowClient.start(api, token)
    const inside = await workflow.send('PATCH', `Customers(${customer})?$select=City`, { City: 'Inside' })
    expect(inside.status).toBe(200)
    const seenInside = inside.headers.get('etag')!
    expect(inside.body['@odata.etag']).toBe(seenInside)
    // It still matches inside, where the row is as that answer showed it.
    expect((await workflow.send('PATCH', `Customers(${customer})`, { Name: 'Tagged again' }, { 'If-Match': seenInside })).status).toBe(204)
    expect((await workflow.abort()).status).toBe(200)

    // Outside, the row takes its next version with other content: the workflow's ETag must not pass for it.
    const changed = await outside('PATCH', `Customers(${customer})?$select=City`, { City: 'Outside' })
    expect(changed.headers.get('etag')).not.toBe(seenInside)
    const blind = await call(`${api}/Customers(${customer})`, { method: 'PATCH', token, body: { City: 'Lost update' }, headers: { 'If-Match': seenInside } })
    expect(blind.status).toBe(412)
    expect((await get(`Customers(${customer})?$select=City`)).body.City).toBe('Outside')
  })

  it('is the ETag of no committed row either, also of one the workflow created; committed, rows take outside versions', async () => {
    const workflow = await WorkflowClient.start(api, token)
    const created = await workflow.send('POST', 'Customers?$select=Name', { Name: 'Made inside' })
    const seenInside = created.headers.get('etag') ?? created.body['@odata.etag']
    expect((await workflow.commit()).status).toBe(200)
    const saved = await get(`Customers(${created.body.Guid})?$select=Name`)
    expect(saved.headers.get('etag')).toMatch(etagAt(1))
    expect(seenInside).toBe('W/"-1"')
    expect((await call(`${api}/Customers(${created.body.Guid})`, { method: 'PATCH', token, body: { City: 'x' }, headers: { 'If-Match': seenInside } })).status).toBe(412)
  })
})

describe('the ETag of an entity deleted outside, its key created again', () => {
  const reborn = async (name: string) => {
    const guid = crypto.randomUUID()
    const seen = (await outside('POST', 'Customers', { Guid: guid, Name: name })).headers.get('etag')!
    return { guid, seen }
  }
  const createAgain = async (guid: string) => {
    expect((await outside('DELETE', `Customers(${guid})`)).status).toBe(204)
    const again = await outside('POST', 'Customers', { Guid: guid, Name: 'Created again' })
    expect(again.headers.get('etag')).toMatch(etagAt(1))
  }

  it('is 412 on a request of the workflow, PATCH, PUT and DELETE', async () => {
    const { guid, seen } = await reborn('Deleted outside')
    await createAgain(guid)
    const workflow = await WorkflowClient.start(api, token)
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const stale = await workflow.send(method, `Customers(${guid})`, method === 'DELETE' ? undefined : { Name: 'Lost update' }, { 'If-Match': seen })
      expect([stale.status, stale.body?.error?.code], method).toEqual([412, 'PreconditionFailed'])
    }
    expect((await workflow.commit()).status).toBe(200)
    expect((await get(`Customers(${guid})?$select=Name`)).body.Name).toBe('Created again')
  })

  it('fails the commit of a request that matched it before the entity was deleted, saving nothing', async () => {
    const { guid, seen } = await reborn('Deleted before the commit')
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('PATCH', `Customers(${guid})`, { Name: 'Changed in the workflow' }, { 'If-Match': seen })).status).toBe(204)
    // The same version as the row the request changed: only its ETag tells them apart.
    await createAgain(guid)
    const commit = await workflow.commit()
    expect(commit.status, commit.text).toBe(409)
    expect(commit.body.error.code).toBe('Conflict')
    expect(commit.body.error.details).toContainEqual(expect.objectContaining({ target: `Customers(${guid})`, message: expect.stringContaining('deleted and created again') }))
    expect((await get(`Customers(${guid})?$select=Name`)).body.Name).toBe('Created again')
    expect((await workflow.abort()).status).toBe(200)
  })

  it('is a change outside of a row the workflow changed without If-Match: 409 naming it, on the next request and the commit', async () => {
    const { guid } = await reborn('Changed by the workflow')
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('PATCH', `Customers(${guid})`, { City: 'Changed in the workflow' })).status).toBe(204)
    await createAgain(guid)
    const detail = { code: 'Conflict', target: `Customers(${guid})`, message: expect.stringContaining('deleted and created again') }
    const next = await workflow.send('GET', `Customers(${guid})?$select=City`)
    expect(next.status, next.text).toBe(409)
    expect(next.body.error.details).toContainEqual(detail)
    const commit = await workflow.commit()
    expect(commit.status, commit.text).toBe(409)
    expect(commit.body.error.details).toContainEqual(detail)
    expect((await get(`Customers(${guid})?$select=Name,City`)).body).toMatchObject({ Name: 'Created again', City: null })
    expect((await workflow.abort()).status).toBe(200)
  })
})

describe('a key the workflow deleted, created again', () => {
  it('is refused with 409 when the request comes, leaving the workflow as it was: its commit would have lost the new entity', async () => {
    const data = await saveSalesData(api, token, 6)
    const customer = (await outside('POST', 'Customers', { Name: 'Deleted and reborn' })).body.Guid
    const workflow = await WorkflowClient.start(api, token)
    expect((await workflow.send('DELETE', `Customers(${customer})`)).status).toBe(204)
    const again = await workflow.send('POST', 'Customers', { Guid: customer, Name: 'Reborn' })
    expect(again.status, again.text).toBe(409)
    expect(again.body.error).toMatchObject({ code: 'Conflict', target: `Customers(${customer})` })
    expect(again.body.error.message).toContain('request 1 of the workflow')

    // In one request too (a $batch of the workflow).
    const batch = await call(`${api}/$batch`, {
      method: 'POST',
      token,
      headers: workflow.headers(workflow.index + 1),
      body: {
        requests: [
          { id: '1', method: 'DELETE', url: `OrderLines(${data.lines[0]})` },
          { id: '2', method: 'POST', url: 'OrderLines', body: { Guid: data.lines[0], 'Order@odata.bind': `Orders(${data.order})`, 'Product@odata.bind': `Products(${data.products[0]})`, Quantity: 1 } },
        ],
      },
    })
    expect(batch.status, batch.text).toBe(409)

    // The workflow is as it was: the delete pending, and it commits.
    expect((await workflow.get(`Customers?$filter=Guid eq ${customer}&$count=true`)).body['@odata.count']).toBe(0)
    expect((await workflow.commit()).status).toBe(200)
    expect((await get(`Customers?$filter=Guid eq ${customer}&$count=true`)).body['@odata.count']).toBe(0)
    expect((await get(`OrderLines(${data.lines[0]})?$select=Quantity`)).body.Quantity).toBe(2)
  })
})
