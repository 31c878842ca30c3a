// Access on the entity routes: a user's responsibilities (through the role hierarchy) and a
// PAT's scope decide what /api/Notes answers; writes to the system entities drop the caches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { basic, cli, FIXTURE_PLUGINS, tokens } from './helpers.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1' }
let server: TestServer
let t: string
let admin: string
let clerk: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: FIXTURE_PLUGINS, users: [ADMIN, CLERK] })
  t = server.tenants[0]
  for (const args of [
    ['role', 'add', 'Office'],
    ['role', 'add', 'Readers', '--parent', 'Office'],
    ['role', 'grant', 'Readers', 'ReadNotes'],
  ]) expect((await cli(server.configPath, ...args, '--tenant', t)).code).toBe(0)
  admin = (await tokens(server)).accessToken
  clerk = (await tokens(server, CLERK.username, CLERK.password)).accessToken
})
afterAll(async () => {
  await server?.stop()
})

const notes = (init: Parameters<typeof call>[1] = {}) => call(`${server.api}/Notes`, init)

describe('entity routes', () => {
  it('lets a full-access user do everything and a user without responsibilities nothing', async () => {
    expect((await notes({ method: 'POST', token: admin, body: { Text: 'hello' } })).status).toBe(200)
    expect((await notes({ token: admin })).status).toBe(200)
    expect((await notes({ token: clerk })).status).toBe(403)
    expect((await notes({ method: 'POST', token: clerk, body: { Text: 'x' } })).status).toBe(403)
  })

  it('gives read through a supervisor role, and nothing more', async () => {
    expect((await cli(server.configPath, 'user', 'grant-role', '--tenant', t, '--username', CLERK.username, '--role', 'Office')).code).toBe(0)
    try {
      expect((await notes({ token: clerk })).status).toBe(200)
      expect((await notes({ method: 'POST', token: clerk, body: { Text: 'x' } })).status).toBe(403)
    } finally {
      expect((await cli(server.configPath, 'user', 'revoke-role', '--tenant', t, '--username', CLERK.username, '--role', 'Office')).code).toBe(0)
    }
    expect((await notes({ token: clerk })).status).toBe(403)
  })

  it('limits a PAT to its scope', async () => {
    const issued = await call(`${server.api}/user/pats`, {
      method: 'POST',
      token: admin,
      body: { name: 'reader', expirationDays: 1, responsibilityIds: [await responsibilityGuid('ReadNotes')] },
    })
    expect(issued.status).toBe(200)
    expect((await notes({ headers: basic(issued.body.secret) })).status).toBe(200)
    expect((await notes({ method: 'POST', headers: basic(issued.body.secret), body: { Text: 'x' } })).status).toBe(403)
  })

  it('drops cached access at once when a role assignment is written through the API', async () => {
    expect((await notes({ token: clerk })).status).toBe(403)
    const users = await call(`${server.api}/Users?$select=Guid,Username&$filter=Username eq 'clerk'`, { token: admin })
    const roles = await call(`${server.api}/Roles?$select=Guid&$filter=Name eq 'Readers'`, { token: admin })
    const link = await call(`${server.api}/UserRoles`, {
      method: 'POST',
      token: admin,
      body: { 'User@odata.bind': `Users(${users.body.value[0].Guid})`, 'Role@odata.bind': `Roles(${roles.body.value[0].Guid})` },
    })
    expect(link.status, link.text).toBe(200)
    expect((await notes({ token: clerk })).status).toBe(200)
    expect((await call(`${server.api}/UserRoles(${link.body.Guid})`, { method: 'DELETE', token: admin })).status).toBe(204)
    expect((await notes({ token: clerk })).status).toBe(403)
  })
})

async function responsibilityGuid(name: string): Promise<string> {
  const response = await call(`${server.api}/Responsibilities?$select=Guid&$filter=Name eq '${name}'`, { token: admin })
  return response.body.value[0].Guid
}
