// Issue 5 on the demo plugin: a reader reads but every write and unpermitted method is 403;
// $expand and navigation paths need read on every entity they reach. Roles and grants are
// made through the OData API itself, as an admin would.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let admin: string
const tokens: Record<string, string> = {}
const keys: Record<string, string> = {}

async function as(token: string, path: string, method = 'GET', body?: unknown) {
  return call(`${server.api}/${path}`, { method, token, body })
}

async function roleWith(name: string, responsibility: string): Promise<string> {
  const role = (await as(admin, 'Roles', 'POST', { Name: name })).body.Guid
  const found = await as(admin, `Responsibilities?$filter=Name eq '${responsibility}'`)
  const granted = await as(admin, 'RoleResponsibilities', 'POST', {
    'Role@odata.bind': `Roles(${role})`,
    'Responsibility@odata.bind': `Responsibilities(${found.body.value[0].Guid})`,
  })
  expect(granted.status).toBe(200)
  return role
}

beforeAll(async () => {
  const users = ['reader', 'closer'].map((username) => ({ username, password: `${username}-password-1` }))
  server = await startTestServer({ users: [ADMIN, ...users] })
  admin = await server.token()
  const people = (await as(admin, 'Users?$select=Username')).body.value
  const assign = async (username: string, role: string) => {
    const user = people.find((u: { Username: string }) => u.Username === username).Guid
    expect((await as(admin, 'UserRoles', 'POST', { 'User@odata.bind': `Users(${user})`, 'Role@odata.bind': `Roles(${role})` })).status).toBe(200)
  }
  await assign('reader', await roleWith('Auditor', 'ReadReports'))
  await assign('closer', await roleWith('Closer', 'CloseOrders'))
  for (const { username, password } of users) tokens[username] = await server.token(server.tenants[0], username, password)

  keys.customer = (await as(admin, 'Customers', 'POST', { Name: 'Perm', Country: 'DE' })).body.Guid
  keys.product = (await as(admin, 'Products', 'POST', { Code: 'PERM', Name: 'Perm', Price: 2, Category: 'X' })).body.Guid
  const order = await as(admin, 'Orders?$expand=Lines', 'POST', {
    Number: 77,
    'Customer@odata.bind': `Customers(${keys.customer})`,
    Lines: [{ Quantity: 1, 'Product@odata.bind': `Products(${keys.product})` }],
  })
  keys.order = order.body.Guid
  keys.line = order.body.Lines[0].Guid
})
afterAll(async () => server?.stop())

describe('a user with only a read responsibility', () => {
  it('reads every entity and expands across them', async () => {
    for (const path of ['Customers', 'Products', 'Orders', 'OrderLines', `Orders(${keys.order})?$expand=Customer,Lines($expand=Product)`]) {
      expect((await as(tokens.reader, path)).status, path).toBe(200)
    }
  })

  it('gets 403 on every write, naming the missing permission', async () => {
    const writes: [string, string, unknown?][] = [
      ['Customers', 'POST', { Name: 'No' }],
      [`Customers(${keys.customer})`, 'PATCH', { City: 'No' }],
      [`Customers(${keys.customer})`, 'PUT', { Name: 'No' }],
      [`Customers(${keys.customer})`, 'DELETE'],
      ['Products', 'POST', { Code: 'NO', Name: 'No', Price: 1 }],
      [`Products(${keys.product})`, 'PATCH', { Price: 3 }],
      [`Orders(${keys.order})`, 'PATCH', { Status: 'Closed' }],
      [`Orders(${keys.order})`, 'DELETE'],
      [`OrderLines(${keys.line})`, 'PATCH', { Quantity: 2 }],
      [`OrderLines(${keys.line})`, 'DELETE'],
    ]
    for (const [path, method, body] of writes) {
      const response = await as(tokens.reader, path, method, body)
      expect(response.status, `${method} ${path}`).toBe(403)
      expect(response.body.error.code).toBe('Forbidden')
      expect(response.body.error.message).toMatch(/needs the (create|update|delete) permission/)
    }
    expect((await as(admin, `Customers(${keys.customer})?$select=City`)).body.City).toBeNull()
  })

  it('calls the methods it is granted and gets 403 on the others', async () => {
    expect((await as(tokens.reader, `Customers(${keys.customer})/Revenue()`)).status).toBe(200)
    expect((await as(tokens.reader, 'Orders/OpenSince(before=2100-01-01)')).status).toBe(200)
    expect((await as(tokens.reader, `Orders(${keys.order})/Close`, 'POST')).status).toBe(403)
    const reprice = await as(tokens.reader, 'Products/Reprice', 'POST', { category: 'X', percent: 5 })
    expect(reprice.status).toBe(403)
    expect(reprice.body.error.message).toContain('execute:Reprice')
  })
})

describe('a user whose responsibility covers orders only', () => {
  it('gets 403 for $expand, $filter paths and $orderby paths into entities it may not read', async () => {
    expect((await as(tokens.closer, 'Orders?$select=Number')).status).toBe(200)
    for (const query of ['$expand=Customer', '$expand=Lines', "$filter=Customer/Country eq 'DE'", '$orderby=Customer/Name', '$filter=Lines/any(l:l/Quantity gt 0)', '$apply=groupby((Customer/Country))']) {
      const response = await as(tokens.closer, `Orders?${query}`)
      expect(response.status, query).toBe(403)
      expect(response.body.error.message, query).toMatch(/read permission on (Customer|OrderLine)/)
    }
  })

  it('may close an order, and nothing else', async () => {
    expect((await as(tokens.closer, `Orders(${keys.order})/Close`, 'POST')).status).toBe(204)
    expect((await as(tokens.closer, `Orders(${keys.order})`, 'PATCH', { Status: 'Open' })).status).toBe(403)
  })
})
