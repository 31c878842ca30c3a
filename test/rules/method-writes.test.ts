// What a modify method may do beyond changing the entities it holds (specification 4.3: "May
// change data (save, delete, etc.)"): refuse a call the business does not allow (400
// MethodRefused, nothing saved), create entities and delete them, through the same unit of
// work, rules and cascades as the API's writes; a read method may do neither of the last two.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer({
    pluginsDir: fileURLToPath(new URL('./library-plugins', import.meta.url)),
    users: [ADMIN, { username: 'lender', password: 'lender-password-1' }],
  })
  token = await server.token()
})
afterAll(async () => server?.stop())

const as = (path: string, method = 'GET', body?: unknown, who = token) => call(`${server.api}/${path}`, { method, token: who, body })
const book = async (Name: string) => (await as('Books', 'POST', { Name })).body.Guid as string
const read = async (path: string) => (await as(path)).body
const count = async (set: string) => (await read(`${set}/$count`)) as number

describe('a method that refuses', () => {
  it('answers 400 MethodRefused with the plugin\'s message, and saves nothing it changed', async () => {
    const key = await book('Refused Twice')
    expect((await as(`Books(${key})/Lend`, 'POST', { reader: 'Ada' })).status).toBe(200)
    const loans = await count('Loans')
    const again = await as(`Books(${key})/Lend`, 'POST', { reader: 'Grace' })
    expect(again.status, again.text).toBe(400)
    expect(again.body.error).toEqual({ code: 'MethodRefused', message: 'Refused Twice is not available' })
    expect(await count('Loans')).toBe(loans)
  })

  it('undoes what it created before refusing, and names the target it gives, as clients name it', async () => {
    const books = await count('Books')
    const refused = await as('Books/Donate', 'POST', { name: 'Too Many', copies: 20 })
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error).toEqual({ code: 'MethodRefused', message: 'The library keeps 4 copies of Too Many; 20 more would make 20', target: 'copies' })
    expect(await count('Books')).toBe(books)
  })

  it('refuses from a read method too', async () => {
    const refused = await as('Books/Named()')
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error).toEqual({ code: 'MethodRefused', message: 'Give a name to look for', target: 'name' })
  })

  it('fails its $batch atomicity group, whose other writes are undone', async () => {
    const key = await book('Batch Lent')
    expect((await as(`Books(${key})/Lend`, 'POST', { reader: 'Ada' })).status).toBe(200)
    const books = await count('Books')
    const answer = await as('$batch', 'POST', {
      requests: [
        { id: '1', method: 'POST', url: 'Books', body: { Name: 'Never Saved' }, atomicityGroup: 'g' },
        { id: '2', method: 'POST', url: `Books(${key})/Lend`, body: { reader: 'Grace' }, atomicityGroup: 'g' },
      ],
    })
    expect(answer.status, answer.text).toBe(200)
    const [created, refused] = answer.body.responses
    expect(refused).toMatchObject({ id: '2', status: 400, body: { error: { code: 'MethodRefused', message: 'Batch Lent is not available' } } })
    expect(created.status).toBe(424)
    expect(await count('Books')).toBe(books)
  })

  it('inside a workflow answers 400 and leaves the workflow as it was', async () => {
    const key = await book('Workflow Lent')
    const workflow = await WorkflowClient.start(server.api, token)
    expect((await workflow.send('POST', `Books(${key})/Lend`, { reader: 'Ada' })).status).toBe(200)
    const refused = await workflow.send('POST', `Books(${key})/Lend`, { reader: 'Grace' })
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error.code).toBe('MethodRefused')
    // The index did not move on: the next request takes the refused one's index.
    expect((await workflow.get(`Books(${key})/Loans/$count`)).body).toBe(1)
    expect((await workflow.commit()).status).toBe(200)
    expect(await read(`Books(${key})/Loans/$count`)).toBe(1)
  })

  it('at a workflow\'s commit, on data changed since, answers 400 and leaves the workflow open', async () => {
    const workflow = await WorkflowClient.start(server.api, token)
    expect((await workflow.send('POST', 'Books/Donate', { name: 'Popular', copies: 2 })).status).toBe(200)
    expect((await as('Books/Donate', 'POST', { name: 'Popular', copies: 3 })).status).toBe(200)
    const refused = await workflow.commit()
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error).toMatchObject({ code: 'MethodRefused', target: 'copies' })
    expect(refused.body.error.message).toContain('The library keeps 4 copies of Popular; 2 more would make 5')
    expect((await workflow.get("Books?$filter=Name eq 'Popular'&$count=true")).body['@odata.count']).toBe(5)
    expect((await workflow.abort()).status).toBe(200)
    expect(await read("Books/$count?$filter=Name eq 'Popular'")).toBe(3)
  })
})

describe('a method that creates', () => {
  it('creates through the rules: defaults, corrections, computed values; the new entity related by its reference', async () => {
    const key = await book('Created Loan')
    const lent = await as(`Books(${key})/Lend?$select=Reader,Days,Since&$expand=Book($select=Available,LoanCount)`, 'POST', { reader: '  Ada  ', days: 7 })
    expect(lent.status, lent.text).toBe(200)
    const today = new Date().toISOString().slice(0, 10)
    expect(lent.body).toMatchObject({ Reader: 'Ada', Days: 7, Since: today, Book: { Available: false, LoanCount: 1 } })
    expect(await read(`Books(${key})/Loans/$count`)).toBe(1)
  })

  it('creates entities of its own type in a static method, returned as a collection', async () => {
    const created = await as('Books/Donate?$select=Name,Available', 'POST', { name: 'Donated', copies: 2 })
    expect(created.status, created.text).toBe(200)
    expect(created.body.value).toEqual([expect.objectContaining({ Name: 'Donated', Available: true }), expect.objectContaining({ Name: 'Donated', Available: true })])
    expect((await read("Books?$filter=Name eq 'Donated'&$count=true")).value).toHaveLength(2)
  })

  it('answers 400 ValidationFailed when what it creates fails the rules, and saves nothing', async () => {
    const books = await count('Books')
    const refused = await as('Books/Misdonate', 'POST', {})
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error.code).toBe('ValidationFailed')
    expect(refused.body.error.details).toEqual([expect.objectContaining({ target: 'Name' })])
    expect(await count('Books')).toBe(books)
  })

  it('creates inside a workflow, seen there and saved by its commit', async () => {
    const key = await book('Workflow Created')
    const workflow = await WorkflowClient.start(server.api, token)
    const lent = await workflow.send('POST', `Books(${key})/Lend?$select=Reader`, { reader: 'Ada' })
    expect(lent.status, lent.text).toBe(200)
    expect(await read(`Books(${key})/Loans/$count`)).toBe(0)
    expect((await workflow.get(`Loans(${lent.body.Guid})?$select=Reader`)).body.Reader).toBe('Ada')
    expect((await workflow.commit()).status).toBe(200)
    expect((await read(`Loans(${lent.body.Guid})?$select=Reader`)).Reader).toBe('Ada')
  })
})

describe('a method that deletes', () => {
  it('deletes an entity it found, and the rules see it go', async () => {
    const key = await book('Returned')
    const loan = (await as(`Books(${key})/Lend`, 'POST', { reader: 'Ada' })).body.Guid
    const returned = await as(`Loans(${loan})/Return`, 'POST', {})
    expect(returned.status, returned.text).toBe(204)
    expect((await as(`Loans(${loan})`)).status).toBe(404)
    expect(await read(`Books(${key})?$select=Available,LoanCount`)).toMatchObject({ Available: true, LoanCount: 0 })
  })

  it('deletes as the API deletes: what cascades goes with it', async () => {
    const key = await book('Withdrawn')
    const loan = (await as(`Books(${key})/Lend`, 'POST', { reader: 'Ada' })).body.Guid
    const withdrawn = await as(`Books(${key})/Withdraw`, 'POST', {})
    expect(withdrawn.status, withdrawn.text).toBe(204)
    expect((await as(`Books(${key})`)).status).toBe(404)
    expect((await as(`Loans(${loan})`)).status).toBe(404)
  })

  it('is refused as the API\'s delete is by what restricts it, and deletes nothing', async () => {
    const key = await book('Reviewed')
    expect((await as('Reviews', 'POST', { 'Book@odata.bind': `Books(${key})`, Stars: 5 })).status).toBe(200)
    const api = await as(`Books(${key})`, 'DELETE')
    const withdrawn = await as(`Books(${key})/Withdraw`, 'POST', {})
    expect(withdrawn.status, withdrawn.text).toBe(api.status)
    expect(withdrawn.body.error.code).toBe(api.body.error.code)
    expect((await as(`Books(${key})`)).status).toBe(200)
  })
})

describe('a plugin\'s mistakes in its method', () => {
  it('find of an entity no plugin declares is the plugin\'s fault, named, not the client\'s', async () => {
    const response = await as('Books/Misfind()')
    expect(response.status, response.text).toBe(500)
    expect(response.body.error.code).toBe('PluginFailed')
    expect(response.body.error.message).toContain("The plugin's method Book.Misfind failed: Error: find('Bok') names no entity; did you mean 'Book'?")
  })
})

describe('what a method\'s writes need', () => {
  it('the execute permission alone, as for its changes: the method is the business\'s rule for them', async () => {
    const admin = token
    const role = (await as('Roles', 'POST', { Name: 'Lenders' })).body.Guid
    const responsibility = (await read("Responsibilities?$filter=Name eq 'Lending'")).value[0].Guid
    await as('RoleResponsibilities', 'POST', { 'Role@odata.bind': `Roles(${role})`, 'Responsibility@odata.bind': `Responsibilities(${responsibility})` })
    const user = (await read("Users?$filter=Username eq 'lender'")).value[0].Guid
    await as('UserRoles', 'POST', { 'User@odata.bind': `Users(${user})`, 'Role@odata.bind': `Roles(${role})` })
    const lender = await server.token(server.tenants[0], 'lender', 'lender-password-1')
    const key = await book('Lender Only')
    expect((await as('Books', 'POST', { Name: 'Not Allowed' }, lender)).status).toBe(403)
    const lent = await as(`Books(${key})/Lend`, 'POST', { reader: 'Ada' }, lender)
    expect(lent.status, lent.text).toBe(200)
    expect((await as(`Books(${key})/Withdraw`, 'POST', {}, lender)).status).toBe(204)
    expect((await as(`Loans(${lent.body.Guid})`, 'GET', undefined, admin)).status).toBe(404)
  })

  it('no grant of full access the caller does not hold, as for any write: 403, nothing saved', async () => {
    const lender = await server.token(server.tenants[0], 'lender', 'lender-password-1')
    const refused = await as('Books/Entrust', 'POST', { username: 'lender' }, lender)
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error.message).toBe('Setting User.HasFullAccess to true needs full access, which you do not have.')
    expect((await read("Users?$filter=Username eq 'lender'&$select=HasFullAccess")).value[0].HasFullAccess).toBe(false)
  })

  it('a read method cannot create or delete: 403, nothing saved', async () => {
    const books = await count('Books')
    const sneaked = await as('Books/Sneak()')
    expect(sneaked.status, sneaked.text).toBe(403)
    expect(sneaked.body.error.message).toContain('A read method cannot change data')
    const key = await book('Not Vanished')
    const vanished = await as(`Books(${key})/Vanish()`)
    expect(vanished.status, vanished.text).toBe(403)
    expect((await as(`Books(${key})`)).status).toBe(200)
    expect(await count('Books')).toBe(books + 1)
  })
})
