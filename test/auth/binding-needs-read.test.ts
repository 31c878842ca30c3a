// A write that binds an existing entity (`Rack@odata.bind`, `RackGuid`, `{"@id": …}`, a `$ref`
// link, a create through the entity's collection) reaches it, and so needs read on its type, as
// a method's entity-typed parameter does: the 403 comes before anything is looked up, so a
// caller who may not read racks cannot tell an existing Guid from a missing one. Binding an
// existing book into a rack's Books (`Books@odata.bind`, `Books: [{"@id": …}]`, POST
// Racks(k)/Books/$ref) needs read on Book besides the update that moving it needs, alike.
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'
import { cli, tokens } from './helpers.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1' }
const RACKER = { username: 'racker', password: 'racker-password-1' }
const PLUGINS = fileURLToPath(new URL('./fixtures/plugins-binding', import.meta.url))

let server: TestServer
let admin: string
let clerk: string
let racker: string
let rack: string
let book: string
const missing = randomUUID()

const api = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${server.api}/${path}`, init)
const run = async (...args: string[]) => expect((await cli(server.configPath, ...args, '--tenant', server.tenants[0])).code, args.join(' ')).toBe(0)

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: PLUGINS, users: [ADMIN, CLERK, RACKER] })
  await run('role', 'add', 'Filing')
  await run('role', 'grant', 'Filing', 'FileBooks')
  await run('role', 'add', 'Racking')
  await run('role', 'grant', 'Racking', 'ReadRacks')
  await run('user', 'grant-role', '--username', CLERK.username, '--role', 'Filing')
  await run('role', 'add', 'Shelving')
  await run('role', 'grant', 'Shelving', 'RackBooks')
  await run('role', 'add', 'Reading')
  await run('role', 'grant', 'Reading', 'ReadBooks')
  await run('user', 'grant-role', '--username', RACKER.username, '--role', 'Shelving')
  admin = (await tokens(server)).accessToken
  clerk = (await tokens(server, CLERK.username, CLERK.password)).accessToken
  racker = (await tokens(server, RACKER.username, RACKER.password)).accessToken
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

/** Each way a write binds the book `guid` into a rack's Books, as [what, method, path, body]. */
const memberBinds = (guid: string): [string, string, string, unknown][] => [
  ['a create by Books@odata.bind', 'POST', 'Racks', { Name: 'R', 'Books@odata.bind': [`Books(${guid})`] }],
  ['a create by @id in Books', 'POST', 'Racks', { Name: 'R', Books: [{ '@id': `Books(${guid})` }] }],
  ['a $ref link into the rack', 'POST', `Racks(${rack})/Books/$ref`, { '@odata.id': `Books(${guid})` }],
]

describe('binding an existing entity into a collection', () => {
  // The member's reference changes (update), and naming it reaches it (read), as any bind does.
  it('needs read on the member type besides update, refused alike for an existing and a missing Guid, writing nothing', async () => {
    const state = async () => [(await api('Books?$select=Name,RackGuid&$orderby=Guid', { token: admin })).body.value, (await api('Racks/$count', { token: admin })).text]
    const before = await state()
    for (const guid of [book, missing]) {
      for (const [what, method, path, body] of memberBinds(guid)) {
        const response = await api(path, { method, token: racker, body })
        expect(response.status, `${what} of ${guid === book ? 'an existing' : 'a missing'} book: ${response.text}`).toBe(403)
        expect(response.body.error.message, what).toMatch(/^Binding Books .*needs the read permission on Book, which your responsibilities do not grant\.$/)
      }
    }
    expect(await state()).toEqual(before)
  })

  it('is done, or answers that the member does not exist, once read is granted', async () => {
    await run('user', 'grant-role', '--username', RACKER.username, '--role', 'Reading')
    try {
      for (const [what, method, path, body] of memberBinds(book)) {
        const response = await api(path, { method, token: racker, body })
        expect(response.status, `${what}: ${response.text}`).toBeLessThan(300)
      }
      for (const [what, method, path, body] of memberBinds(missing)) {
        const response = await api(path, { method, token: racker, body })
        expect([400, 404], `${what}: ${response.text}`).toContain(response.status)
      }
    } finally {
      await run('user', 'revoke-role', '--username', RACKER.username, '--role', 'Reading')
    }
  })

  it.each([
    ['a create by Books@odata.bind', 'POST', () => 'Racks', () => ({ Name: 'In a workflow', 'Books@odata.bind': [`Books(${book})`] })],
    ['a $ref link into another rack', 'POST', (other: string) => `Racks(${other})/Books/$ref`, () => ({ '@odata.id': `Books(${book})` })],
  ])("is checked again at a workflow's commit, with the access of then (%s): 403, and the workflow stays open", async (_, method, path, body) => {
    const other = (await api('Racks', { method: 'POST', token: admin, body: { Name: 'Other' } })).body.Guid
    await run('user', 'grant-role', '--username', RACKER.username, '--role', 'Reading')
    const workflow = await WorkflowClient.start(server.api, racker)
    const rackOf = async () => (await api(`Books(${book})?$select=RackGuid`, { token: admin })).body.RackGuid
    const before = await rackOf()
    let revoked = false
    try {
      const bound = await workflow.send(method, path(other), body())
      expect(bound.status, bound.text).toBeLessThan(300)
      await run('user', 'revoke-role', '--username', RACKER.username, '--role', 'Reading')
      revoked = true
      const commit = await workflow.commit()
      expect(commit.status, commit.text).toBe(403)
      expect(commit.body.error.message).toMatch(/: Binding Books to Rack\.Books needs the read permission on Book, which your responsibilities do not grant\.$/)
      expect(await rackOf()).toBe(before)
    } finally {
      expect((await workflow.abort()).status).toBe(200)
      if (!revoked) await run('user', 'revoke-role', '--username', RACKER.username, '--role', 'Reading')
    }
  })
})
