// A write that binds an existing entity (`Rack@odata.bind`, `RackGuid`, `{"@id": …}`, a `$ref`
// link, a create through the entity's collection) reaches it, and so needs read on its type, as
// a method's entity-typed parameter does: the 403 comes before anything is looked up, so a
// caller who may not read racks cannot tell an existing Guid from a missing one.
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'
import { cli, tokens } from './helpers.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1' }
const PLUGINS = fileURLToPath(new URL('./fixtures/plugins-binding', import.meta.url))

let server: TestServer
let admin: string
let clerk: string
let rack: string
let book: string
const missing = randomUUID()

const api = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${server.api}/${path}`, init)
const run = async (...args: string[]) => expect((await cli(server.configPath, ...args, '--tenant', server.tenants[0])).code, args.join(' ')).toBe(0)

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: PLUGINS, users: [ADMIN, CLERK] })
  await run('role', 'add', 'Filing')
  await run('role', 'grant', 'Filing', 'FileBooks')
  await run('role', 'add', 'Racking')
  await run('role', 'grant', 'Racking', 'ReadRacks')
  await run('user', 'grant-role', '--username', CLERK.username, '--role', 'Filing')
  admin = (await tokens(server)).accessToken
  clerk = (await tokens(server, CLERK.username, CLERK.password)).accessToken
  rack = (await api('Racks', { method: 'POST', token: admin, body: { Name: 'A' } })).body.Guid
  book = (await api('Books', { method: 'POST', token: admin, body: { Name: 'Loose' } })).body.Guid
})
afterAll(async () => {
  await server?.stop()
})

/** Each way a write binds the rack `guid`, as [what, method, path, body]. */
const binds = (guid: string): [string, string, string, unknown][] => [
  ['a create by @odata.bind', 'POST', 'Books', { Name: 'B', 'Rack@odata.bind': `Racks(${guid})` }],
  ['a create by the foreign key', 'POST', 'Books', { Name: 'B', RackGuid: guid }],
  ['a create by @id', 'POST', 'Books', { Name: 'B', Rack: { '@id': `Racks(${guid})` } }],
  ['a create through the rack', 'POST', `Racks(${guid})/Books`, { Name: 'B' }],
  ['an update by @odata.bind', 'PATCH', `Books(${book})`, { 'Rack@odata.bind': `Racks(${guid})` }],
  ['a $ref link from the book', 'PUT', `Books(${book})/Rack/$ref`, { '@odata.id': `Racks(${guid})` }],
  ['a $ref link from the rack', 'POST', `Racks(${guid})/Books/$ref`, { '@odata.id': `Books(${book})` }],
]

describe('binding an existing entity', () => {
  it('needs read on its type, refused alike for an existing and a missing Guid, writing nothing', async () => {
    const books = async () => (await api('Books?$select=Name,RackGuid&$orderby=Guid', { token: admin })).body.value
    const before = await books()
    for (const guid of [rack, missing]) {
      for (const [what, method, path, body] of binds(guid)) {
        const response = await api(path, { method, token: clerk, body })
        expect(response.status, `${what} of ${guid === rack ? 'an existing' : 'a missing'} rack: ${response.text}`).toBe(403)
        expect(response.body.error.message, what).toMatch(/needs the read permission on Rack, which your responsibilities do not grant\.$/)
      }
    }
    expect(await books()).toEqual(before)
  })

  it('needs nothing to clear a reference, which names no entity', async () => {
    const response = await api(`Books(${book})`, { method: 'PATCH', token: clerk, body: { Rack: null } })
    expect(response.status, response.text).toBe(204)
  })

  it('is done, or answers that the entity does not exist, once read is granted', async () => {
    await run('user', 'grant-role', '--username', CLERK.username, '--role', 'Racking')
    try {
      for (const [what, method, path, body] of binds(rack)) {
        const response = await api(path, { method, token: clerk, body })
        expect(response.status, `${what}: ${response.text}`).toBeLessThan(300)
      }
      for (const [what, method, path, body] of binds(missing)) {
        const response = await api(path, { method, token: clerk, body })
        expect([400, 404], `${what}: ${response.text}`).toContain(response.status)
      }
    } finally {
      await run('user', 'revoke-role', '--username', CLERK.username, '--role', 'Racking')
    }
  })

  it("is checked again at a workflow's commit, with the access of then: 403, and the workflow stays open", async () => {
    await run('user', 'grant-role', '--username', CLERK.username, '--role', 'Racking')
    const workflow = await WorkflowClient.start(server.api, clerk)
    let revoked = false
    try {
      const filed = await workflow.send('POST', 'Books', { Name: 'In a workflow', 'Rack@odata.bind': `Racks(${rack})` })
      expect(filed.status, filed.text).toBe(200)
      await run('user', 'revoke-role', '--username', CLERK.username, '--role', 'Racking')
      revoked = true
      const commit = await workflow.commit()
      expect(commit.status, commit.text).toBe(403)
      expect(commit.body.error.message).toContain('Binding Racks to Book.Rack needs the read permission on Rack, which your responsibilities do not grant.')
      expect((await api(`Books?$filter=Name eq 'In a workflow'&$count=true`, { token: admin })).body['@odata.count']).toBe(0)
      expect((await workflow.get(`Books(${filed.body.Guid})?$select=Name`)).status).toBe(200)
    } finally {
      expect((await workflow.abort()).status).toBe(200)
      if (!revoked) await run('user', 'revoke-role', '--username', CLERK.username, '--role', 'Racking')
    }
  })
})
