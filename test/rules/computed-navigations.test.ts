// Computed properties that read through navigations of the staff plugin: a virtual one through
// a reference (Employee.DeptName from 'Dept.Name'), and one from a bare collection, its
// membership (Dept.HeadCount from 'Employees').

import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins', import.meta.url)) })
  token = await server.token()
  api = server.api
})
afterAll(async () => server?.stop())

const post = (path: string, body: unknown) => call(`${api}/${path}`, { method: 'POST', token, body })
const headCount = async (dept: { Guid: string }) => (await call(`${api}/Depts(${dept.Guid})?$select=HeadCount`, { token })).body.HeadCount

describe('a computed property from a bare collection', () => {
  it('is recomputed when members are added, moved and deleted', async () => {
    const sales = (await post('Depts', { Name: 'Sales' })).body
    const support = (await post('Depts', { Name: 'Support' })).body
    expect(await headCount(sales)).toBe(0)
    const ann = (await post('Employees', { Name: 'Ann', DeptGuid: sales.Guid })).body
    await post('Employees', { Name: 'Bob', DeptGuid: sales.Guid })
    expect(await headCount(sales)).toBe(2)
    expect((await call(`${api}/Employees(${ann.Guid})`, { method: 'PATCH', token, body: { DeptGuid: support.Guid } })).status).toBeLessThan(300)
    expect([await headCount(sales), await headCount(support)]).toEqual([1, 1])
    expect((await call(`${api}/Employees(${ann.Guid})`, { method: 'DELETE', token })).status).toBe(204)
    expect([await headCount(sales), await headCount(support)]).toEqual([1, 0])
  })
})

describe('a virtual computed property read through a reference', () => {
  it('sees the referenced values in a read, the reply of a write and an expand', async () => {
    const research = (await post('Depts', { Name: 'Research', Code: 'RES' })).body
    const created = await call(`${api}/Employees?$select=DeptName,DeptCode`, { method: 'POST', token, body: { Name: 'Cyd', DeptGuid: research.Guid }, headers: { Prefer: 'return=representation' } })
    expect(created.body).toMatchObject({ DeptName: 'Research', DeptCode: 'RES' })
    expect((await call(`${api}/Employees(${created.body.Guid})?$select=DeptName`, { token })).body.DeptName).toBe('Research')
    const expanded = await call(`${api}/Depts(${research.Guid})?$select=Name&$expand=Employees($select=DeptName)`, { token })
    expect(expanded.body.Employees).toEqual([expect.objectContaining({ DeptName: 'Research' })])
    const alone = (await post('Employees', { Name: 'Dee' })).body
    expect((await call(`${api}/Employees(${alone.Guid})?$select=DeptName`, { token })).body.DeptName).toBeNull()
  })
})

describe('a virtual computed property read through a navigation', () => {
  it('does not make a write load, run the rules of or refuse on the entities that read it: it is computed when read', async () => {
    const research = (await post('Depts', { Name: 'Labs', Code: 'LAB' })).body
    const kim = (await post('Employees', { Name: 'Kim', DeptGuid: research.Guid })).body
    // A note the rules would refuse now, stored before they did (SQL, an older plugin).
    const config = loadConfig(server.configPath, {})
    const database = new pg.Client({ connectionString: databaseUrl(config.Database.ConnectionString, config.Tenants.get(server.tenants[0])!.Database) })
    await database.connect()
    try {
      await database.query(`update "Employee" set "Note" = 'refused' where "Guid" = $1`, [kim.Guid])
    } finally {
      await database.end()
    }
    // Only the virtual DeptName reads Dept.Name: renaming the department touches no employee.
    const renamed = await call(`${api}/Depts(${research.Guid})`, { method: 'PATCH', token, body: { Name: 'Laboratories' } })
    expect(renamed.status, renamed.text).toBe(204)
    expect((await call(`${api}/Employees(${kim.Guid})?$select=DeptName`, { token })).body.DeptName).toBe('Laboratories')
  })
})
