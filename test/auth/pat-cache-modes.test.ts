// Issue 6: a PAT used after its owner loses a responsibility is narrowed on the very next
// request, with the scope and role caches on (invalidated by NOTIFY) and off.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'

const basic = (secret: string) => ({ Authorization: `Basic ${Buffer.from(`pat:${secret}`).toString('base64')}` })

describe.each([
  ['cached', { RoleCacheExpirationMinutes: 60, ResponsibilityCacheExpirationMinutes: 60 }],
  ['uncached', { RoleCacheExpirationMinutes: 0, ResponsibilityCacheExpirationMinutes: 0 }],
])('with the caches %s', (_mode, apiOptions) => {
  let server: TestServer
  let admin: string
  let grant: string
  let secret: string

  beforeAll(async () => {
    server = await startTestServer({ users: [ADMIN, { username: 'clerk', password: 'clerk-password-1' }], config: { ApiOptions: apiOptions } })
    admin = await server.token()
    const as = (path: string, method = 'GET', body?: unknown) => call(`${server.api}/${path}`, { method, token: admin, body })
    const role = (await as('Roles', 'POST', { Name: 'Clerks' })).body.Guid
    const takeOrders = (await as("Responsibilities?$filter=Name eq 'TakeOrders'")).body.value[0].Guid
    grant = (await as('RoleResponsibilities', 'POST', { 'Role@odata.bind': `Roles(${role})`, 'Responsibility@odata.bind': `Responsibilities(${takeOrders})` })).body.Guid
    const clerk = (await as("Users?$filter=Username eq 'clerk'")).body.value[0].Guid
    await as('UserRoles', 'POST', { 'User@odata.bind': `Users(${clerk})`, 'Role@odata.bind': `Roles(${role})` })
    const clerkToken = await server.token(server.tenants[0], 'clerk', 'clerk-password-1')
    const issued = await call(`${server.api}/user/pats`, { method: 'POST', token: clerkToken, body: { name: 'script', expirationDays: 30, responsibilityIds: [takeOrders] } })
    expect(issued.status).toBe(200)
    secret = issued.body.secret
  })
  afterAll(async () => server?.stop())

  it('narrows the PAT on the next request once the owner loses the responsibility', async () => {
    for (let i = 0; i < 3; i++) expect((await call(`${server.api}/Orders`, { headers: basic(secret) })).status).toBe(200)
    expect((await call(`${server.api}/RoleResponsibilities(${grant})`, { method: 'DELETE', token: admin })).status).toBe(204)
    const narrowed = await call(`${server.api}/Orders`, { headers: basic(secret) })
    expect(narrowed.status).toBe(403)
    expect(narrowed.body.error.code).toBe('Forbidden')
  })
})
