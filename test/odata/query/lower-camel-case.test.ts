// ApiOptions:EnableLowerCamelCase = true: property names in URLs and in bodies are lower
// camel case (`age`, `manager/name`, `displayName`, `reports@odata.count`); entity set names
// stay as declared, as $metadata writes them. The same reference evaluation as the other
// files, its expected bodies renamed.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Employee } from '../../fixtures/dataset.ts'
import { lowerCamel } from '../../../server/model/naming.ts'
import { data, type QueryCase } from './cases.ts'
import { startQueryServer, url, type QueryServer } from './query-server.ts'
import { call } from '../../support/test-server.ts'
import { fn, gt, keysOf, project, sortRows, withoutEtags } from './reference.ts'

const { employees: E, orders: O, departments: D } = data
const [ada] = E

/** Renames every member of an expected body as the service does with the option on. */
function camel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camel)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, v]) => [name.startsWith('@') ? name : lowerCamel(name.replace(/@odata\.count$/, '')) + (name.endsWith('@odata.count') ? '@odata.count' : ''), camel(v)]))
  }
  return value
}

const displayName = (e: Employee) => (e.Nickname ? `${e.Name} "${e.Nickname}"` : e.Name)
const named = (e: Employee) => ({ Guid: e.Guid, Name: e.Name })
const employees = (filter: string, predicate: (e: Employee) => boolean): QueryCase => ({ path: url('Employees', { $filter: filter }), expected: camel(keysOf(sortRows(E.filter(predicate)))) })

const CASES: QueryCase[] = [
  employees('age gt 40', (e) => gt(e.Age, 40)),
  employees("name eq 'Ada Lovelace' or nickname eq 'ken'", (e) => e.Name === 'Ada Lovelace' || e.Nickname === 'ken'),
  employees("manager/name eq 'Ada Lovelace'", (e) => e.Manager === ada),
  employees("manager/manager/name eq 'Ada Lovelace'", (e) => e.Manager?.Manager === ada),
  employees('reports/any(r:r/age gt 60)', (e) => e.Reports.some((r) => gt(r.Age, 60))),
  employees('reports/$count gt 1 and active', (e) => e.Reports.length > 1 && e.Active),
  employees("department/code eq 'ENG'", (e) => e.Department?.Code === 'ENG'),
  employees(`managerGuid eq ${ada.Guid}`, (e) => e.Manager === ada),
  employees(`guid eq ${ada.Guid}`, (e) => e === ada),
  employees("level eq entityctl.EmployeeLevel'Lead'", (e) => e.Level === 'Lead'),
  employees("contains(tolower(name),'an')", (e) => fn.contains(fn.tolower(e.Name), 'an')),
  employees('year(hireDate) ge 2015 and hour(lastLogin) lt 12', (e) => gt(fn.year(e.HireDate), 2014) && (fn.hour(e.LastLogin) ?? 99) < 12),
  employees('mentor/age gt manager/age', (e) => gt(e.Mentor?.Age, e.Manager?.Age)),
  employees('$it/manager eq null', (e) => e.Manager === null),
  { path: url('Employees', { $select: 'name,age', $orderby: 'age desc,name' }), expected: camel(sortRows(E, [(e) => e.Age, 'desc'], (e) => e.Name).map((e) => project(e, ['Name', 'Age']))) },
  { path: url('Employees', { $select: 'displayName' }), expected: camel(sortRows(E).map((e) => ({ Guid: e.Guid, DisplayName: displayName(e) }))) },
  { path: url('Employees', { $orderby: 'department/budget desc,manager/name' }), expected: camel(keysOf(sortRows(E, [(e) => e.Department?.Budget, 'desc'], (e) => e.Manager?.Name))) },
  {
    path: url('Employees', { $select: 'name', $expand: 'manager($select=name),reports($select=name;$orderby=name desc;$count=true)' }),
    expected: camel(sortRows(E).map((e) => ({ ...named(e), Manager: e.Manager && named(e.Manager), Reports: sortRows(e.Reports, [(r) => r.Name, 'desc']).map(named), 'Reports@odata.count': e.Reports.length }))),
  },
  {
    path: url('Employees', { $filter: 'manager eq null', $expand: 'reports($levels=2;$select=name)', $select: 'name' }),
    expected: camel(sortRows(E.filter((e) => e.Manager === null)).map((e) => ({ ...named(e), Reports: sortRows(e.Reports).map((r) => ({ ...named(r), Reports: sortRows(r.Reports).map(named) })) }))),
  },
  { path: url('Departments', { $expand: '*', $select: 'code' }), expected: camel(sortRows(D).map((d) => ({ ...project(d, ['Code']), Employees: keysOf(sortRows(d.Employees)) }))) },
  { path: url('Orders', { $filter: 'lines/$count gt 3', $select: 'number,total' }), expected: camel(sortRows(O.filter((o) => o.Lines.length > 3)).map((o) => project(o, ['Number', 'Total']))) },
  { path: `Employees?$FILTER=${encodeURIComponent('age GT 60')}&select=name`, expected: camel(sortRows(E.filter((e) => gt(e.Age, 60))).map(named)) },
]

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer({ apiOptions: { EnableLowerCamelCase: true } })
})
afterAll(async () => {
  await server?.stop()
})

describe('lower camel case', () => {
  it.each(CASES.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, { path, expected }) => {
    const response = await server.get(path)
    expect(response.status, response.text).toBe(200)
    expect(withoutEtags(response.body.value)).toEqual(expected)
  })

  it('writes $select=* in lower camel case, virtual properties included', async () => {
    const response = await server.get(url('Employees', { $select: '*', $top: 1 }))
    expect(response.status).toBe(200)
    expect(Object.keys(response.body.value[0]).sort()).toEqual(
      ['@odata.etag', 'guid', 'title', 'name', 'nickname', 'level', 'hireDate', 'lastLogin', 'startTime', 'active', 'rating', 'salary', 'age', 'managerGuid', 'mentorGuid', 'departmentGuid', 'displayName'].sort(),
    )
  })

  it('names the types of odata.metadata=full by the lower camel names, enumerations and temporal types included', async () => {
    const response = await server.get(url('Employees', { $select: '*', $top: 1 }), { Accept: 'application/json;odata.metadata=full' })
    expect(response.status, response.text).toBe(200)
    expect(response.body.value[0]).toMatchObject({
      'guid@odata.type': '#Guid',
      'level@odata.type': expect.stringMatching(/^#entityctl\.EmployeeLevel/),
      'hireDate@odata.type': '#Date',
      'lastLogin@odata.type': '#DateTimeOffset',
      'startTime@odata.type': '#TimeOfDay',
      'age@odata.type': '#Int32',
    })
    for (const told of ['name', 'active', 'rating', 'displayName']) expect(response.body.value[0]).not.toHaveProperty(`${told}@odata.type`)
  })

  it('groups and aggregates by lower camel paths', async () => {
    const response = await server.get(url('Orders', { $apply: 'groupby((customer/country),aggregate(total with sum as revenue,$count as n))', $orderby: 'n desc,customer/country' }))
    expect(response.status, response.text).toBe(200)
    const countries = [...new Set(O.map((o) => o.Customer.Country))]
    expect(response.body.value).toHaveLength(countries.length)
    for (const row of response.body.value) {
      const orders = O.filter((o) => o.Customer.Country === row.customer.country)
      expect(row.n).toBe(orders.length)
    }
  })

  it('names the key of the entities $apply filters or computes by its lower camel name, as a read of them does', async () => {
    for (const apply of ['filter(total gt 0)', 'compute(total mul 2 as double)']) {
      const response = await server.get(url('Orders', { $apply: apply, $top: 1 }), { Accept: 'application/json;odata.metadata=full' })
      expect(response.status, response.text).toBe(200)
      expect(response.body['@odata.context'], apply).toMatch(/#Orders\(guid[,)]/)
      expect(Object.keys(response.body.value[0]), apply).toEqual(expect.arrayContaining(['guid', 'guid@odata.type']))
      expect(response.body.value[0], apply).not.toHaveProperty('Guid')
    }
  })

  it('counts with a lower camel filter', async () => {
    const response = await server.get(url('Employees/$count', { $filter: 'active and manager ne null' }))
    expect(response.text).toBe(String(E.filter((e) => e.Active && e.Manager !== null).length))
  })

  it('names properties in lower camel case in validation errors too, nested ones included', async () => {
    const answer = await call(`${server.server.api}/Departments`, {
      method: 'POST',
      token: server.token,
      body: { code: 'TOO-LONG-CODE', employees: [{ active: true }] },
    })
    expect(answer.status).toBe(400)
    expect(answer.body.error.details).toEqual(
      expect.arrayContaining([
        { code: 'ValidationFailed', target: 'code', message: 'code may have at most 10 characters (has 13)' },
        { code: 'ValidationFailed', target: 'name', message: 'name is required' },
        { code: 'ValidationFailed', target: 'employees/0/name', message: 'name is required' },
      ]),
    )
    expect(answer.body.error.details).toHaveLength(3)
  })

  it('names the natural key and the restricting navigation in lower camel case in conflicts', async () => {
    const taken = await call(`${server.server.api}/Departments`, { method: 'POST', token: server.token, body: { code: D[0].Code, name: 'Twin' } })
    expect(taken.status, taken.text).toBe(409)
    expect(taken.body.error.message).toBe(`Another entity already has this natural key (code = ${D[0].Code}).`)
    const customer = O[0].Customer.Guid
    const restricted = await call(`${server.server.api}/Customers(${customer})`, { method: 'DELETE', token: server.token })
    expect(restricted.status, restricted.text).toBe(409)
    expect(restricted.body.error.message).toBe(`Customer ${customer} still has orders, which keep it from being deleted; delete or move them first.`)
  })

  it('names the parent of a role in lower camel case when it would make a cycle', async () => {
    const role = await call(`${server.server.api}/Roles`, { method: 'POST', token: server.token, body: { name: 'Loop' } })
    expect(role.status, role.text).toBe(200)
    const cycle = await call(`${server.server.api}/Roles(${role.body.guid})`, {
      method: 'PATCH',
      token: server.token,
      body: { 'parent@odata.bind': `Roles(${role.body.guid})` },
    })
    expect([cycle.status, cycle.body.error.code, cycle.body.error.target]).toEqual([400, 'RoleCycle', 'parent'])
  })

  it.each([
    ['Employees?$filter=Age gt 40', "Employees has no property 'Age'; did you mean 'age'?"],
    ['Employees?$select=Name', "Employees has no property 'Name'; did you mean 'name'?"],
    ['Employees?$expand=Manager', "Employees has no property 'Manager'; did you mean 'manager'?"],
    ['Employees?$orderby=manager/Name', "Employees has no property 'Name'; did you mean 'name'?"],
    ["Employees?$filter=displayName eq 'x'", 'Employees.displayName is not persisted'],
    ['Orders?$apply=groupby((Status))', "Orders has no property 'Status'; did you mean 'status'?"],
  ])('refuses Pascal case names: %s', async (path, message) => {
    const response = await server.get(path.replaceAll(' ', '%20'))
    expect(response.status).toBe(400)
    expect(response.body.error.code).toBe('InvalidQuery')
    expect(response.body.error.message).toContain(message)
  })
})
