// No one grants more than they hold: a caller without full access who may write UserRoles,
// RoleResponsibilities, Roles and Users (an access admin) grants only responsibilities they hold
// themselves, counted through the role tree (a supervisor role gives every role below it), and
// may not change or delete a full-access user. Each escalation is a 403 that writes nothing,
// through a single request, a deep insert, a $batch change set and a workflow's commit.
import pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { tablesHash } from '../support/table-hash.ts'
import { WorkflowClient } from '../workflows/helpers.ts'
import { tenantPool } from './helpers.ts'

const ACCESS_ADMIN = { username: 'accessadmin', password: 'accessadmin-password-1' }
const CLERK = { username: 'clerk', password: 'clerk-password-1' }
const PLUGINS = new URL('./fixtures/plugins-access-admin', import.meta.url).pathname
const TABLES = ['User', 'Role', 'UserRole', 'RoleResponsibility']

let server: TestServer
let pool: pg.Pool
let admin: string
let accessAdmin: string
const users: Record<string, string> = {}
const roles: Record<string, string> = {}
const responsibilities: Record<string, string> = {}
/** The access admin's own assignment of AccessAdmins. */
let ownAssignment: string
/** Auditors → Audit. */
let auditorsAudit: string

const api = (path: string, init: Parameters<typeof call>[1] = {}) => call(`${server.api}/${path}`, init)
const post = async (path: string, body: unknown, token = admin) => {
  const answer = await api(path, { method: 'POST', token, body })
  expect(answer.status, answer.text).toBe(200)
  return answer.body.Guid as string
}
const link = (role: string, responsibility: string) =>
  post('RoleResponsibilities', { 'Role@odata.bind': `Roles(${roles[role]})`, 'Responsibility@odata.bind': `Responsibilities(${responsibilities[responsibility]})` })
const assign = (role: string, user: string, token = admin) => post('UserRoles', { 'Role@odata.bind': `Roles(${roles[role]})`, 'User@odata.bind': `Users(${users[user]})` }, token)

/**
 * Statements sent on a connection still running another (pg queues them, warns once per process
 * and, from pg 9, refuses them): the role tree a grant reads is read on the write's connection.
 */
const queuedStatements: string[] = []
const sendQuery = pg.Client.prototype.query
beforeAll(() => {
  pg.Client.prototype.query = function (this: pg.Client & { _activeQuery: unknown }, ...args: unknown[]) {
    if (this._activeQuery) queuedStatements.push(String((args[0] as { text?: string })?.text ?? args[0]))
    return (sendQuery as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof sendQuery
})
afterAll(() => {
  pg.Client.prototype.query = sendQuery
})

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: PLUGINS, users: [ADMIN, ACCESS_ADMIN, CLERK] })
  pool = tenantPool(server)
  admin = await server.token()
  for (const { Guid, Username } of (await api('Users?$select=Guid,Username', { token: admin })).body.value) users[Username] = Guid
  for (const { Guid, Name } of (await api('Responsibilities?$select=Guid,Name', { token: admin })).body.value) responsibilities[Name] = Guid
  // Director (Payroll) supervises AccessAdmins (ManageAccess, Audit); Auditors (Audit), Payroll (Payroll), Empty stand apart.
  roles.Director = await post('Roles', { Name: 'Director' })
  roles.AccessAdmins = await post('Roles', { Name: 'AccessAdmins', 'Parent@odata.bind': `Roles(${roles.Director})` })
  for (const name of ['Auditors', 'Payroll', 'Empty']) roles[name] = await post('Roles', { Name: name })
  await link('Director', 'Payroll')
  await link('AccessAdmins', 'ManageAccess')
  await link('AccessAdmins', 'Audit')
  auditorsAudit = await link('Auditors', 'Audit')
  await link('Payroll', 'Payroll')
  ownAssignment = await assign('AccessAdmins', ACCESS_ADMIN.username)
  accessAdmin = await server.token(undefined, ACCESS_ADMIN.username, ACCESS_ADMIN.password)
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

describe('an access admin without full access', () => {
  let before: string
  beforeEach(async () => {
    before = await tablesHash(pool, TABLES)
  })
  const refused = async (answer: Awaited<ReturnType<typeof call>>, message: string) => {
    expect(answer.status, answer.text).toBe(403)
    expect(answer.body.error).toMatchObject({ code: 'Forbidden', message })
    expect(await tablesHash(pool, TABLES)).toBe(before)
  }
  const as = (method: string, path: string, body?: unknown) => api(path, { method, token: accessAdmin, body })

  it('may not give anyone a role that gives what it does not hold, directly or through the roles below it', async () => {
    await refused(
      await as('POST', 'UserRoles', { 'Role@odata.bind': `Roles(${roles.Payroll})`, 'User@odata.bind': `Users(${users.accessadmin})` }),
      "Granting role 'Payroll' gives the responsibility 'Payroll', which you do not hold.",
    )
    // A supervisor holds its own and every role below it: AccessAdmins' responsibilities are held, Director's own Payroll is not.
    await refused(
      await as('POST', 'UserRoles', { 'Role@odata.bind': `Roles(${roles.Director})`, 'User@odata.bind': `Users(${users.clerk})` }),
      "Granting role 'Director' gives the responsibility 'Payroll', which you do not hold.",
    )
    await refused(await as('PATCH', `UserRoles(${ownAssignment})`, { 'Role@odata.bind': `Roles(${roles.Director})` }), "Granting role 'Director' gives the responsibility 'Payroll', which you do not hold.")
    await refused(
      await as('PUT', `UserRoles(${ownAssignment})`, { 'Role@odata.bind': `Roles(${roles.Payroll})`, 'User@odata.bind': `Users(${users.accessadmin})` }),
      "Granting role 'Payroll' gives the responsibility 'Payroll', which you do not hold.",
    )
    await refused(await as('PUT', `UserRoles(${ownAssignment})/Role/$ref`, { '@odata.id': `Roles(${roles.Payroll})` }), "Granting role 'Payroll' gives the responsibility 'Payroll', which you do not hold.")
    // A deep insert: a new user created with the role.
    await refused(
      await as('POST', 'Users', { Username: 'mole', Roles: [{ 'Role@odata.bind': `Roles(${roles.Payroll})` }] }),
      "Granting role 'Payroll' gives the responsibility 'Payroll', which you do not hold.",
    )
  })

  it('may not attach a responsibility it does not hold to a role, nor place a role under one so that its holders gain one', async () => {
    const payroll = `Responsibilities(${responsibilities.Payroll})`
    await refused(
      await as('POST', 'RoleResponsibilities', { 'Role@odata.bind': `Roles(${roles.AccessAdmins})`, 'Responsibility@odata.bind': payroll }),
      "Giving role 'AccessAdmins' the responsibility 'Payroll' needs it, which you do not hold.",
    )
    await refused(await as('PATCH', `RoleResponsibilities(${auditorsAudit})`, { 'Responsibility@odata.bind': payroll }), "Giving role 'Auditors' the responsibility 'Payroll' needs it, which you do not hold.")
    await refused(
      await as('PATCH', `Roles(${roles.Payroll})`, { 'Parent@odata.bind': `Roles(${roles.AccessAdmins})` }),
      "Placing role 'Payroll' under 'AccessAdmins' gives its holders the responsibility 'Payroll', which you do not hold.",
    )
    await refused(
      await as('POST', 'Roles', { Name: 'Sneaky', 'Parent@odata.bind': `Roles(${roles.AccessAdmins})`, Responsibilities: [{ 'Responsibility@odata.bind': payroll }] }),
      "Placing role 'Sneaky' under 'AccessAdmins' gives its holders the responsibility 'Payroll', which you do not hold.",
    )
  })

  it('may not build and grant such a role in a $batch change set, nor commit it in a workflow', async () => {
    const batch = await api('$batch', {
      method: 'POST',
      token: accessAdmin,
      body: {
        requests: [
          { id: 'role', atomicityGroup: 'g', method: 'POST', url: 'Roles', body: { Name: 'Built' } },
          {
            id: 'link',
            atomicityGroup: 'g',
            dependsOn: ['role'],
            method: 'POST',
            url: 'RoleResponsibilities',
            body: { 'Role@odata.bind': '$role', 'Responsibility@odata.bind': `Responsibilities(${responsibilities.Payroll})` },
          },
        ],
      },
    })
    expect(batch.status, batch.text).toBe(200)
    // The change set fails as a whole: the link refused, the role it needed not created either.
    expect(batch.body.responses).toMatchObject([
      { id: 'role', status: 424, body: { error: { code: 'FailedDependency' } } },
      { id: 'link', status: 403, body: { error: { message: "Giving role 'Built' the responsibility 'Payroll' needs it, which you do not hold." } } },
    ])
    expect(await tablesHash(pool, TABLES)).toBe(before)

    // Granted inside a workflow while the grantor holds Payroll; taken away before the commit.
    const payrollHolder = await assign('Payroll', ACCESS_ADMIN.username)
    const workflow = await WorkflowClient.start(server.api, await server.token(undefined, ACCESS_ADMIN.username, ACCESS_ADMIN.password))
    expect((await workflow.send('POST', 'UserRoles', { 'Role@odata.bind': `Roles(${roles.Payroll})`, 'User@odata.bind': `Users(${users.clerk})` })).status).toBe(200)
    expect((await api(`UserRoles(${payrollHolder})`, { method: 'DELETE', token: admin })).status).toBe(204)
    const commit = await workflow.commit()
    expect(commit.status, commit.text).toBe(403)
    expect(commit.body.error.message).toContain("Granting role 'Payroll' gives the responsibility 'Payroll', which you do not hold.")
    const clerkPayroll = await api(`UserRoles?$filter=User/Username eq 'clerk' and Role/Name eq 'Payroll'&$count=true`, { token: admin })
    expect(clerkPayroll.body['@odata.count']).toBe(0)
    expect((await workflow.abort()).status).toBe(200)
  })

  it('may not change, disable, demote or delete a full-access user', async () => {
    const administrator = `Users(${users.admin})`
    await refused(await as('PATCH', administrator, { Disabled: true }), "Changing user 'admin', who has full access, needs full access, which you do not have.")
    await refused(await as('PATCH', administrator, { HasFullAccess: false }), "Changing user 'admin', who has full access, needs full access, which you do not have.")
    await refused(await as('PUT', administrator, { Username: 'admin2', HasFullAccess: true }), 'Setting User.HasFullAccess to true needs full access, which you do not have.')
    await refused(await as('PATCH', administrator, { Username: 'ousted' }), "Changing user 'admin', who has full access, needs full access, which you do not have.")
    await refused(await as('DELETE', administrator), "Deleting user 'admin', who has full access, needs full access, which you do not have.")
    // A role, even one it holds, would disable the administrator's full-access fallback PAT for good.
    await refused(
      await as('POST', 'UserRoles', { 'Role@odata.bind': `Roles(${roles.Auditors})`, 'User@odata.bind': administrator }),
      "Giving user 'admin', who has full access, a role needs full access, which you do not have.",
    )
    await refused(await as('PATCH', `UserRoles(${ownAssignment})`, { 'User@odata.bind': administrator }), "Giving user 'admin', who has full access, a role needs full access, which you do not have.")
  })

  it('grants what it holds: roles, responsibilities, a place in the tree, and changes users without full access', async () => {
    await assign('Auditors', CLERK.username, accessAdmin)
    await assign('AccessAdmins', CLERK.username, accessAdmin)
    await post('RoleResponsibilities', { 'Role@odata.bind': `Roles(${roles.Empty})`, 'Responsibility@odata.bind': `Responsibilities(${responsibilities.Audit})` }, accessAdmin)
    expect((await as('PATCH', `Roles(${roles.Empty})`, { 'Parent@odata.bind': `Roles(${roles.AccessAdmins})` })).status).toBe(204)
    expect((await as('PATCH', `Users(${users.clerk})`, { Disabled: true })).status).toBe(204)
    expect((await as('DELETE', `Users(${users.clerk})`)).status).toBe(204)
    const held = await api(`UserRoles?$filter=User/Username eq 'clerk'&$count=true`, { token: admin })
    expect(held.body['@odata.count']).toBe(0)
  })
})

it('reads the role tree one statement after another on the connection of the write', () => {
  expect(queuedStatements).toEqual([])
})
