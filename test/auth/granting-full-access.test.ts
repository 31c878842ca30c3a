// Full access passes every check, so only a caller who has it may grant it: a responsibility
// with create or update on User (a helpdesk that disables users) must not let its holders make
// themselves, or anyone, administrators.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { tokens } from './helpers.ts'

const HELPDESK = { username: 'helpdesk', password: 'helpdesk-password-1' }
const CLERK = { username: 'clerk', password: 'clerk-password-1' }
const PLUGINS = new URL('./fixtures/plugins-user-admin', import.meta.url).pathname

let server: TestServer
let admin: string
let helpdesk: string
const users: Record<string, string> = {}

const api = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${server.api}/${path}`, init)
const asAdmin = async (method: string, path: string, body: unknown) => {
  const answer = await api(path, { method, token: admin, body })
  expect(answer.status, answer.text).toBe(200)
  return answer.body.Guid as string
}

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: PLUGINS, users: [ADMIN, HELPDESK, CLERK] })
  admin = (await tokens(server)).accessToken
  for (const { Guid, Username } of (await api('Users?$select=Guid,Username', { token: admin })).body.value) users[Username] = Guid
  const role = await asAdmin('POST', 'Roles', { Name: 'Helpdesk' })
  const responsibility = (await api("Responsibilities?$select=Guid&$filter=Name eq 'ManageUsers'", { token: admin })).body.value[0].Guid
  await asAdmin('POST', 'RoleResponsibilities', { 'Role@odata.bind': `Roles(${role})`, 'Responsibility@odata.bind': `Responsibilities(${responsibility})` })
  await asAdmin('POST', 'UserRoles', { 'Role@odata.bind': `Roles(${role})`, 'User@odata.bind': `Users(${users.helpdesk})` })
  helpdesk = (await tokens(server, HELPDESK.username, HELPDESK.password)).accessToken
})
afterAll(async () => {
  await server?.stop()
})

describe('a caller without full access, holding create and update on User', () => {
  it('disables and enables users, and creates them', async () => {
    expect((await api(`Users(${users.clerk})`, { method: 'PATCH', token: helpdesk, body: { Disabled: true } })).status).toBe(204)
    expect((await api(`Users(${users.clerk})`, { method: 'PATCH', token: helpdesk, body: { Disabled: false } })).status).toBe(204)
    expect((await api('Users', { method: 'POST', token: helpdesk, body: { Username: 'newcomer', HasFullAccess: false } })).status).toBe(200)
  })

  it('may not grant full access: to itself, to another user, or to a user it creates', async () => {
    const attempts = [
      api(`Users(${users.helpdesk})`, { method: 'PATCH', token: helpdesk, body: { HasFullAccess: true } }),
      api(`Users(${users.clerk})`, { method: 'PUT', token: helpdesk, body: { Username: 'clerk', HasFullAccess: true } }),
      api('Users', { method: 'POST', token: helpdesk, body: { Username: 'mole', HasFullAccess: true } }),
    ]
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status, answer.text).toBe(403)
      expect(answer.body.error.message).toBe('Setting User.HasFullAccess to true needs full access, which you do not have.')
    }
    const after = await api('Users?$select=Username,HasFullAccess&$filter=HasFullAccess eq true&$orderby=Username', { token: admin })
    expect(after.body.value.map((user: { Username: string }) => user.Username)).toEqual(['admin'])
    // Nor does it pass any check now.
    expect((await api('Roles', { token: helpdesk })).status).toBe(403)
  })
})
