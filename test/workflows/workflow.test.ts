// Workflows end to end over HTTP (specification 3.1, 4.7; decisions.md "Workflows"): the
// price example, reads of every kind seeing pending changes, isolation, the index rules,
// validation inside a workflow, ownership and the request limit.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { basic } from '../auth/helpers.ts'
import { saveSalesData, WorkflowClient, type SalesData } from './helpers.ts'

const OTHER = { username: 'other', password: 'other-password-1', fullAccess: true }
const CLERK = { username: 'clerk', password: 'clerk-password-1', fullAccess: false }
/** Holds no role until a workflow grants one (CLERK's roles change in 'access'). */
const TAKER = { username: 'taker', password: 'taker-password-1', fullAccess: false }
const MAX_REQUESTS = 30

let server: TestServer
let token: string
let api: string

beforeAll(async () => {
  server = await startTestServer({ tenants: ['t1', 't2'], users: [ADMIN, OTHER, CLERK, TAKER], config: { Workflow: { MaxRequests: MAX_REQUESTS } } })
  token = await server.token()
  api = server.api
})
afterAll(async () => server?.stop())

const get = (path: string, as = token) => call(`${api}/${path}`, { token: as })
const start = () => WorkflowClient.start(api, token)

describe('the price example', () => {
  let data: SalesData
  beforeAll(async () => {
    data = await saveSalesData(api, token, 100)
  })

  it('answers a quantity change with the recomputed totals, shows them inside only, and saves them on commit', async () => {
    const workflow = await start()
    const changed = await workflow.send('PATCH', `OrderLines(${data.lines[0]})?$select=LineTotal&$expand=Order($select=Total)`, { Quantity: 4 })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ LineTotal: 51.96, Order: { Total: 243.3 } })
    expect((await workflow.get(`Orders(${data.order})?$select=Total`)).body.Total).toBe(243.3)
    expect((await get(`Orders(${data.order})?$select=Total`)).body.Total).toBe(217.32)

    const committed = await workflow.commit()
    expect(committed.status).toBe(200)
    expect(committed.body).toEqual({ workflowId: workflow.id, committed: true })
    expect((await get(`Orders(${data.order})?$select=Total&$expand=Lines($select=Quantity;$orderby=Quantity)`)).body).toMatchObject({
      Total: 243.3,
      Lines: [{ Quantity: 3 }, { Quantity: 4 }],
    })
  })

  it('saves nothing when aborted instead', async () => {
    const before = (await get(`Orders(${data.order})?$select=Total`)).body.Total
    const workflow = await start()
    expect((await workflow.send('PATCH', `OrderLines(${data.lines[1]})?$select=LineTotal&$expand=Order($select=Total)`, { Quantity: 10 })).body).toMatchObject({
      LineTotal: 637.8,
    })
    const aborted = await workflow.abort()
    expect(aborted.status).toBe(200)
    expect(aborted.body).toEqual({ workflowId: workflow.id, aborted: true })
    expect((await get(`Orders(${data.order})?$select=Total`)).body.Total).toBe(before)
    expect((await workflow.get(`Orders(${data.order})`)).body.error.code).toBe('WorkflowNotFound')
  })

  it('matches the fixed routes case-insensitively: POST /API/workflow', async () => {
    const created = await call(`${server.url}/API/workflow`, { method: 'POST', token })
    expect(created.status).toBe(200)
    const aborted = await call(`${server.url}/API/Workflow/Abort`, { method: 'POST', token, headers: { 'Workflow-Id': created.body.workflowId, 'Workflow-Index': '1' } })
    expect(aborted.status).toBe(200)
  })
})

describe('reads inside a workflow', () => {
  let data: SalesData
  let workflow: WorkflowClient
  let pendingCustomer: string
  let pendingOrder: string

  beforeAll(async () => {
    data = await saveSalesData(api, token, 200)
    workflow = await start()
    pendingCustomer = (await workflow.send('POST', 'Customers', { Name: 'Pending Company' })).body.Guid
    const order = await workflow.send('POST', 'Orders?$select=Total', {
      Number: 201,
      'Customer@odata.bind': `Customers(${pendingCustomer})`,
      Lines: [{ 'Product@odata.bind': `Products(${data.products[1]})`, Quantity: 10 }],
    })
    expect(order.status).toBe(200)
    expect(order.body.Total).toBe(637.8)
    pendingOrder = order.body.Guid
    expect((await workflow.send('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 5 })).status).toBe(204)
    expect((await workflow.send('DELETE', `OrderLines(${data.lines[1]})`)).status).toBe(204)
  })
  afterAll(async () => {
    await workflow.abort()
  })

  it('by key: a pending create is there, a pending delete is gone; outside, the other way round', async () => {
    expect((await workflow.get(`Customers(${pendingCustomer})?$select=Name`)).body.Name).toBe('Pending Company')
    expect((await get(`Customers(${pendingCustomer})`)).status).toBe(404)
    expect((await workflow.get(`OrderLines(${data.lines[1]})`)).status).toBe(404)
    expect((await get(`OrderLines(${data.lines[1]})`)).status).toBe(200)
  })

  it('in $filter and $orderby', async () => {
    const filtered = await workflow.get(`Customers?$filter=Name eq 'Pending Company'&$select=Name`)
    expect(filtered.body.value).toEqual([expect.objectContaining({ Name: 'Pending Company' })])
    expect((await get(`Customers?$filter=Name eq 'Pending Company'`)).body.value).toEqual([])
    const ordered = await workflow.get(`Orders?$filter=Number ge 200 and Number lt 300&$orderby=Total desc&$select=Number,Total`)
    expect(ordered.body.value.map((o: any) => [o.Number, o.Total])).toEqual([
      [201, 637.8],
      [200, 64.95],
    ])
  })

  it('in $expand', async () => {
    const expanded = await workflow.get(`Orders(${data.order})?$select=Total&$expand=Lines($select=Quantity),Customer($select=Name)`)
    expect(expanded.body).toMatchObject({ Total: 64.95, Lines: [{ Quantity: 5 }], Customer: { Name: 'Customer 200' } })
    const outside = await get(`Orders(${data.order})?$select=Total&$expand=Lines($select=Quantity)`)
    expect(outside.body.Lines).toHaveLength(2)
  })

  it('in $count, both /$count and $count=true', async () => {
    const filter = `$filter=Order/Number ge 200 and Order/Number lt 300 and Quantity ge 5`
    expect((await workflow.get(`OrderLines/$count?${filter}`)).text).toBe('2')
    expect((await get(`OrderLines/$count?${filter}`)).text).toBe('0')
    const counted = await workflow.get(`Customers?$count=true&$filter=startswith(Name,'Pending')`)
    expect(counted.body['@odata.count']).toBe(1)
  })

  it('in $apply', async () => {
    const path = `OrderLines?$apply=filter(Order/Number ge 200 and Order/Number lt 300)/aggregate(Quantity with sum as Quantities)`
    expect((await workflow.get(path)).body.value).toEqual([expect.objectContaining({ Quantities: 15 })])
    expect((await get(path)).body.value).toEqual([expect.objectContaining({ Quantities: 5 })])
  })

  it('in methods, bound and static', async () => {
    expect((await workflow.get(`Customers(${pendingCustomer})/Revenue()`)).body.value).toBe(637.8)
    const open = await workflow.get(`Orders/OpenSince(before=2099-01-01)?$filter=Number ge 200 and Number lt 300&$select=Number&$orderby=Number`)
    expect(open.body.value.map((o: any) => o.Number)).toEqual([200, 201])
  })

  it('gives a create without Guid the same key and defaults on every replay', async () => {
    const first = await workflow.get(`Orders(${pendingOrder})?$select=OrderDate,Status&$expand=Lines($select=Guid)`)
    const again = await workflow.get(`Orders(${pendingOrder})?$select=OrderDate,Status&$expand=Lines($select=Guid)`)
    expect(first.body).toMatchObject({ Status: 'Open', OrderDate: new Date().toISOString().slice(0, 10) })
    expect(again.body.Lines[0].Guid).toBe(first.body.Lines[0].Guid)
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'))
  })
})

describe('isolation', () => {
  it('shows pending changes to no other user, and not to the owner without the headers', async () => {
    const workflow = await start()
    const created = await workflow.send('POST', 'Customers', { Name: 'Invisible' })
    const otherToken = await server.token(server.tenants[0], OTHER.username, OTHER.password)
    expect((await get(`Customers(${created.body.Guid})`)).status).toBe(404)
    expect((await get(`Customers(${created.body.Guid})`, otherToken)).status).toBe(404)
    expect((await get(`Customers?$filter=Name eq 'Invisible'&$count=true`, otherToken)).body['@odata.count']).toBe(0)
    await workflow.abort()
  })
})

describe('ownership', () => {
  it('is 404 WorkflowNotFound for another user of the tenant and for a user of another tenant', async () => {
    const workflow = await start()
    expect((await workflow.send('POST', 'Customers', { Name: 'Owned' })).status).toBe(200)
    const strangers = [
      await server.token(server.tenants[0], OTHER.username, OTHER.password),
      await server.token(server.tenants[1]),
    ]
    for (const stranger of strangers) {
      const intruder = new WorkflowClient(api, stranger, workflow.id)
      intruder.index = workflow.index
      for (const answer of [await intruder.get('Customers'), await intruder.commit(), await intruder.abort()]) {
        expect(answer.status).toBe(404)
        expect(answer.body.error.code).toBe('WorkflowNotFound')
      }
    }
    expect((await workflow.get(`Customers?$filter=Name eq 'Owned'&$count=true`)).body['@odata.count']).toBe(1)
    expect((await workflow.commit()).status).toBe(200)
  })

  it('is 404 for an unknown workflow id', async () => {
    const unknown = new WorkflowClient(api, token, '0190a0c0-0000-7000-8000-000000000000')
    expect((await unknown.get('Customers')).body.error.code).toBe('WorkflowNotFound')
  })
})

describe('access', () => {
  // The clerk holds TakeOrders and CloseOrders through one role, which a test may take away.
  let grant: Record<string, string>
  let link: string
  let clerkToken: string
  const post = async (path: string, body: unknown) => {
    const answer = await call(`${api}/${path}`, { method: 'POST', token, body })
    expect(answer.status, answer.text).toBe(200)
    return answer.body.Guid as string
  }
  const only = async (set: string, filter: string) => (await get(`${set}?$select=Guid&$filter=${filter}`)).body.value[0].Guid as string
  const takeRole = async () => expect((await call(`${api}/UserRoles(${link})`, { method: 'DELETE', token })).status).toBe(204)
  const giveRole = async () => {
    link = await post('UserRoles', grant)
  }

  beforeAll(async () => {
    const role = await post('Roles', { Name: 'Workflow clerk' })
    for (const name of ['TakeOrders', 'CloseOrders']) {
      await post('RoleResponsibilities', { 'Role@odata.bind': `Roles(${role})`, 'Responsibility@odata.bind': `Responsibilities(${await only('Responsibilities', `Name eq '${name}'`)})` })
    }
    grant = { 'Role@odata.bind': `Roles(${role})`, 'User@odata.bind': `Users(${await only('Users', `Username eq '${CLERK.username}'`)})` }
    await giveRole()
    clerkToken = await server.token(server.tenants[0], CLERK.username, CLERK.password)
  })

  it('commits with the access its user holds at the commit: a role taken away since refuses it, 403, the workflow still open', async () => {
    const data = await saveSalesData(api, token, 400)
    const clerk = await WorkflowClient.start(api, clerkToken)
    expect((await clerk.send('PATCH', `Orders(${data.order})`, { Number: 401 })).status).toBe(204)
    await takeRole()

    const refused = await clerk.commit()
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error.code).toBe('Forbidden')
    expect(refused.body.error.message).toContain('needs the update permission on Order')
    expect((await get(`Orders(${data.order})?$select=Number`)).body.Number).toBe(400)

    await giveRole()
    expect((await clerk.commit()).status).toBe(200)
    expect((await get(`Orders(${data.order})?$select=Number`)).body.Number).toBe(401)
  })

  it('gives a retry the stored answer only while its caller holds the access it was answered with', async () => {
    const clerk = await WorkflowClient.start(api, clerkToken)
    const read = 'Customers?$select=Name&$top=1'
    const first = await clerk.get(read)
    expect(first.status).toBe(200)
    expect((await clerk.at(clerk.index, 'GET', read)).body).toEqual(first.body)

    // The clerk's own PAT scoped to CloseOrders may not read customers: nor their stored answer.
    const pat = await call(`${api}/user/pats`, {
      method: 'POST',
      token: clerkToken,
      body: { name: 'closer', expirationDays: 1, responsibilityIds: [await only('Responsibilities', "Name eq 'CloseOrders'")] },
    })
    expect(pat.status, pat.text).toBe(200)
    const byPat = await call(`${api}/${read}`, { headers: { ...basic(pat.body.secret), ...clerk.headers(clerk.index) } })
    expect(byPat.status, byPat.text).toBe(403)
    expect(byPat.body.error.code).toBe('Forbidden')

    await takeRole()
    try {
      const retried = await clerk.at(clerk.index, 'GET', read)
      expect(retried.status, retried.text).toBe(403)
      expect(retried.body.error.message).toContain('Request 1 of the workflow')
    } finally {
      await giveRole()
    }
    expect((await clerk.at(clerk.index, 'GET', read)).body).toEqual(first.body)
    expect((await clerk.commit()).status).toBe(200)
  })
})

describe('index rules', () => {
  it('refuses a gap and a stale index with 409 WorkflowIndexConflict stating the expected index', async () => {
    const workflow = await start()
    const gap = await workflow.at(2, 'GET', 'Customers')
    expect(gap.status).toBe(409)
    expect(gap.body.error.code).toBe('WorkflowIndexConflict')
    expect(gap.body.error.message).toContain('next index of this workflow is 1')
    expect((await workflow.send('POST', 'Customers', { Name: 'Indexed 1' })).status).toBe(200)
    expect((await workflow.send('POST', 'Customers', { Name: 'Indexed 2' })).status).toBe(200)
    const stale = await workflow.at(1, 'POST', 'Customers', { Name: 'Indexed 1' })
    expect(stale.status).toBe(409)
    expect(stale.body.error.message).toContain('is 3')
    expect((await workflow.get(`Customers?$filter=startswith(Name,'Indexed')&$count=true`)).body['@odata.count']).toBe(2)
    await workflow.abort()
  })

  it('answers a repeat of the last index with the same method and path with the stored answer, applied once', async () => {
    const workflow = await start()
    const first = await workflow.send('POST', 'Customers?$select=Name', { Name: 'Retried' })
    const retry = await workflow.at(workflow.index, 'POST', 'Customers?$select=Name', { Name: 'Retried' })
    expect(retry.status).toBe(200)
    expect(retry.body).toEqual(first.body)
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'))
    expect(retry.headers.get('location')).toBe(first.headers.get('location'))
    const different = await workflow.at(workflow.index, 'POST', 'Products', { Code: 'X', Name: 'X', Price: 1 })
    expect(different.status).toBe(409)
    expect(different.body.error.code).toBe('WorkflowIndexConflict')
    expect((await workflow.get(`Customers?$filter=Name eq 'Retried'&$count=true`)).body['@odata.count']).toBe(1)
    expect((await workflow.commit()).status).toBe(200)
    expect((await get(`Customers?$filter=Name eq 'Retried'&$count=true`)).body['@odata.count']).toBe(1)
  })

  it('applies concurrent duplicates of one index once: the others get the stored answer or 409', async () => {
    const workflow = await start()
    const duplicates = await Promise.all(Array.from({ length: 4 }, () => workflow.at(1, 'POST', 'Customers', { Name: 'Concurrent' })))
    const accepted = duplicates.filter((d) => d.status === 200)
    const refused = duplicates.filter((d) => d.status === 409)
    expect(accepted.length + refused.length).toBe(4)
    expect(accepted.length).toBeGreaterThanOrEqual(1)
    expect(new Set(accepted.map((a) => a.body.Guid)).size).toBe(1)
    workflow.index = 1
    expect((await workflow.get(`Customers?$filter=Name eq 'Concurrent'&$count=true`)).body['@odata.count']).toBe(1)
    // Different requests (paths) racing for one index: exactly one is applied.
    const racing = await Promise.all(
      ['Name', 'Title', 'Guid'].map((select) => workflow.at(3, 'POST', `Customers?$select=${select}`, { Name: `Racer ${select}` })),
    )
    expect(racing.filter((r) => r.status === 200)).toHaveLength(1)
    expect(racing.filter((r) => r.status === 409)).toHaveLength(2)
    workflow.index = 3
    expect((await workflow.get(`Customers?$filter=startswith(Name,'Racer')&$count=true`)).body['@odata.count']).toBe(1)
    expect((await workflow.commit()).status).toBe(200)
    expect((await get(`Customers?$filter=Name eq 'Concurrent' or startswith(Name,'Racer')&$count=true`)).body['@odata.count']).toBe(2)
  })

  it('answers an abort after the commit, or a second abort, with why it cannot be aborted', async () => {
    const committed = await start()
    await committed.send('POST', 'Customers', { Name: 'Committed, then aborted' })
    expect((await committed.commit()).status).toBe(200)
    const late = await committed.abort(committed.index + 2)
    expect(late.status).toBe(404)
    expect(late.body.error).toMatchObject({ code: 'WorkflowNotFound', message: `Workflow ${committed.id} does not exist: it was committed.` })
    expect((await get(`Customers?$filter=Name eq 'Committed, then aborted'&$count=true`)).body['@odata.count']).toBe(1)

    const aborted = await start()
    expect((await aborted.abort()).status).toBe(200)
    const again = await aborted.abort()
    expect(again.status).toBe(404)
    expect(again.body.error.message).toContain('or was aborted')
  })

  it('answers a retried commit with its answer again', async () => {
    const workflow = await start()
    await workflow.send('POST', 'Customers', { Name: 'Committed twice' })
    expect((await workflow.commit()).status).toBe(200)
    const again = await workflow.commit(workflow.index + 1)
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ workflowId: workflow.id, committed: true })
    expect((await get(`Customers?$filter=Name eq 'Committed twice'&$count=true`)).body['@odata.count']).toBe(1)
    expect((await workflow.get('Customers')).body.error.code).toBe('WorkflowNotFound')
  })

  it('needs both headers, well formed, and names the one at fault as the target', async () => {
    const workflow = await start()
    const malformed: [Record<string, string>, string][] = [
      [{ 'Workflow-Id': workflow.id }, 'Workflow-Index'],
      [{ 'Workflow-Index': '1' }, 'Workflow-Id'],
      [{ 'Workflow-Id': 'nope', 'Workflow-Index': '1' }, 'Workflow-Id'],
      [{ 'Workflow-Id': workflow.id, 'Workflow-Index': '0' }, 'Workflow-Index'],
      [{ 'Workflow-Id': workflow.id, 'Workflow-Index': 'first' }, 'Workflow-Index'],
    ]
    for (const [headers, target] of malformed) {
      const answer = await call(`${api}/Customers`, { token, headers })
      expect([answer.status, answer.body.error.code, answer.body.error.target]).toEqual([400, 'InvalidRequest', target])
    }
    expect((await call(`${api}/workflow/commit`, { method: 'POST', token })).status).toBe(400)
    await workflow.abort()
  })
})

describe('access changed by a workflow', () => {
  it('holds on the next request once committed, also when the workflow only adds rows (a role granted)', async () => {
    const taker = (await get(`Users?$filter=Username eq '${TAKER.username}'&$select=Username`)).body.value[0].Guid
    const takerToken = await server.token(undefined, TAKER.username, TAKER.password)
    // Read once: the taker's access (none) is cached.
    expect((await get('Customers?$top=1', takerToken)).status).toBe(403)

    const responsibility = (await get(`Responsibilities?$filter=Name eq 'TakeOrders'&$select=Name`)).body.value[0].Guid
    const workflow = await start()
    const role = (await workflow.send('POST', 'Roles', { Name: 'Order takers' })).body.Guid
    expect((await workflow.send('POST', 'RoleResponsibilities', { 'Role@odata.bind': `Roles(${role})`, 'Responsibility@odata.bind': `Responsibilities(${responsibility})` })).status).toBe(200)
    expect((await workflow.send('POST', 'UserRoles', { 'User@odata.bind': `Users(${taker})`, 'Role@odata.bind': `Roles(${role})` })).status).toBe(200)
    expect((await workflow.commit()).status).toBe(200)

    expect((await get('Customers?$top=1', takerToken)).status).toBe(200)
  })
})

describe('the commit', () => {
  it('needs the permissions of the writes it saves: a read-only PAT of the same user cannot save them', async () => {
    const reports = (await get(`Responsibilities?$filter=Name eq 'ReadReports'&$select=Name`)).body.value[0].Guid
    const pat = await call(`${api}/user/pats`, { method: 'POST', token, body: { name: 'read only', expirationDays: 1, responsibilityIds: [reports] } })
    expect(pat.status, pat.text).toBe(200)
    const readOnly = { Authorization: `Basic ${Buffer.from(`pat:${pat.body.secret}`).toString('base64')}` }

    const workflow = await start()
    expect((await workflow.send('POST', 'Customers', { Name: 'Saved only by a writer' })).status).toBe(200)
    const refused = await call(`${api}/workflow/commit`, { method: 'POST', headers: { ...readOnly, ...workflow.headers(workflow.index + 1) } })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error.message).toBe('Request 1 of the workflow (POST /api/Customers) is no longer allowed: Creating Customers needs the create permission on Customer, which your responsibilities do not grant.')
    expect((await get(`Customers?$filter=Name eq 'Saved only by a writer'&$count=true`)).body['@odata.count']).toBe(0)

    // Still open: the user's full-access sign-in commits it.
    expect((await workflow.commit()).status).toBe(200)
    expect((await get(`Customers?$filter=Name eq 'Saved only by a writer'&$count=true`)).body['@odata.count']).toBe(1)
  })
})

describe('system routes', () => {
  it('are refused with a workflow\'s headers, doing nothing: they would be done for good, not pending', async () => {
    const workflow = await start()
    const headers = workflow.headers(1)
    const sent = [
      await call(`${api}/user/pats`, { method: 'POST', token, headers, body: { name: 'made in a workflow', expirationDays: 5 } }),
      await call(`${api}/workflow`, { method: 'POST', token, headers }),
      await call(`${api}/auth/signin`, { method: 'POST', headers, body: { TenantId: 't1', Username: ADMIN.username, Password: ADMIN.password } }),
      await call(`${api}/roles/tree`, { token, headers }),
    ]
    for (const answer of sent) {
      expect(answer.status, answer.text).toBe(400)
      expect(answer.body.error).toMatchObject({ code: 'InvalidRequest', message: expect.stringContaining('cannot be part of a workflow') })
    }
    expect((await call(`${api}/user/pats`, { token })).body).not.toContainEqual(expect.objectContaining({ name: 'made in a workflow' }))
    // The workflow is untouched: its first index is still free.
    expect((await workflow.get('Customers?$top=1')).status).toBe(200)
    expect((await workflow.abort()).status).toBe(200)
  })
})

describe('validation inside a workflow', () => {
  it('answers 400 and leaves the workflow as it was, still usable with the same index', async () => {
    const data = await saveSalesData(api, token, 300)
    const workflow = await start()
    expect((await workflow.send('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 4 })).status).toBe(204)
    const refused = await workflow.send('PATCH', `OrderLines(${data.lines[1]})`, { Quantity: 11 })
    expect(refused.status).toBe(400)
    expect(refused.body.error.code).toBe('ValidationFailed')
    expect(workflow.index).toBe(1)
    const order = await workflow.get(`Orders(${data.order})?$select=Total&$expand=Lines($select=Quantity;$orderby=Quantity)`)
    expect(order.status).toBe(200)
    expect(order.body).toMatchObject({ Total: 243.3, Lines: [{ Quantity: 3 }, { Quantity: 4 }] })
    expect(workflow.index).toBe(2)
    expect((await workflow.commit()).status).toBe(200)
    expect((await get(`Orders(${data.order})?$select=Total`)).body.Total).toBe(243.3)
  })
})

describe('limits', () => {
  it(`refuses request ${MAX_REQUESTS + 1} with 400 WorkflowLimitExceeded, and still commits`, async () => {
    const workflow = await start()
    for (let i = 0; i < MAX_REQUESTS; i++) expect((await workflow.get('Customers?$top=1')).status).toBe(200)
    const over = await workflow.get('Customers?$top=1')
    expect(over.status).toBe(400)
    expect(over.body.error.code).toBe('WorkflowLimitExceeded')
    expect((await workflow.commit()).status).toBe(200)
  })
})
