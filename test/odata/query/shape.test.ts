// $orderby, $select (virtual properties and *), $expand with nested options and $levels,
// $top/$skip/$count, the /$count segment and navigation paths: each request's body is
// compared with the one the reference evaluation builds from the fixture objects.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Employee } from '../../fixtures/dataset.ts'
import { etagAt } from '../../support/entity-tags.ts'
import { data, expectValue, valueCase, type QueryCase } from './cases.ts'
import { startQueryServer, url, type QueryServer } from './query-server.ts'
import { fn, gt, keysOf, LEVELS, project, rank, sortRows, withoutEtags, type SortKey } from './reference.ts'

const { employees: E, flights: F, airports: A, departments: D, orders: O, customers: C } = data
const [ada, grace, alan, zoe] = E

const displayName = (e: Employee) => (e.Nickname ? `${e.Name} "${e.Nickname}"` : e.Name)
const named = (e: Employee) => ({ Guid: e.Guid, Name: e.Name })
const key = (row: { Guid: string } | null) => (row ? { Guid: row.Guid } : null)

const ordered = (orderby: string, ...keys: SortKey<Employee>[]) => valueCase(url('Employees', { $orderby: orderby }), keysOf(sortRows(E, ...keys)))

const orderbyCases: QueryCase[] = [
  ordered('Age', (e) => e.Age),
  ordered('Age desc', [(e) => e.Age, 'desc']),
  ordered('Age asc,Name desc', (e) => e.Age, [(e) => e.Name, 'desc']),
  ordered('Name', (e) => e.Name),
  ordered('Nickname', (e) => e.Nickname),
  ordered('Nickname desc', [(e) => e.Nickname, 'desc']),
  ordered('Manager/Name', (e) => e.Manager?.Name),
  ordered('Manager/Name desc,Name', [(e) => e.Manager?.Name, 'desc'], (e) => e.Name),
  ordered('Department/Budget desc', [(e) => e.Department?.Budget, 'desc']),
  ordered('Manager/Manager/Name,Age', (e) => e.Manager?.Manager?.Name, (e) => e.Age),
  ordered('HireDate desc', [(e) => e.HireDate, 'desc']),
  ordered('LastLogin', (e) => e.LastLogin),
  ordered('StartTime desc', [(e) => e.StartTime, 'desc']),
  ordered('Rating', (e) => e.Rating),
  ordered('Salary desc', [(e) => e.Salary, 'desc']),
  ordered('length(Name) desc', [(e) => fn.length(e.Name), 'desc']),
  ordered('tolower(Name)', (e) => fn.tolower(e.Name)),
  ordered('Reports/$count desc', [(e) => e.Reports.length, 'desc']),
  ordered('year(HireDate) desc,Name', [(e) => fn.year(e.HireDate), 'desc'], (e) => e.Name),
  ordered('Active,Name', (e) => e.Active, (e) => e.Name),
  ordered('Age add 10 desc', [(e) => (e.Age === null ? null : e.Age + 10), 'desc']),
  ordered('Mentor/Age desc,Manager/Age', [(e) => e.Mentor?.Age, 'desc'], (e) => e.Manager?.Age),
  ordered('Guid desc', [(e) => e.Guid, 'desc']),
  ordered('Department/Code,Level desc,Name', (e) => e.Department?.Code, [(e) => LEVELS(e.Level), 'desc'], (e) => e.Name),
  ordered('Level', (e) => LEVELS(e.Level)),
  ordered('Manager/Level desc,Name', [(e) => LEVELS(e.Manager?.Level ?? null), 'desc'], (e) => e.Name),
  valueCase(url('Orders', { $orderby: 'Status desc,Number' }), keysOf(sortRows(O, [(o) => rank(['Open', 'Closed'])(o.Status), 'desc'], (o) => o.Number))),
  valueCase(url('Flights', { $orderby: 'Status,Number' }), keysOf(sortRows(F, (f) => rank(['Scheduled', 'Boarding', 'Departed', 'Cancelled'])(f.Status), (f) => f.Number))),
  valueCase(url('Flights', { $orderby: 'From/Code,To/Code,Departure' }), keysOf(sortRows(F, (f) => f.From.Code, (f) => f.To.Code, (f) => f.Departure))),
  valueCase(url('Orders', { $orderby: 'Customer/Name,Number desc' }), keysOf(sortRows(O, (o) => o.Customer.Name, [(o) => o.Number, 'desc']))),
  valueCase(url('Orders', { $orderby: 'Total desc', $top: 5 }), keysOf(sortRows(O, [(o) => o.Total, 'desc']).slice(0, 5))),
  valueCase(url('Orders', { $orderby: 'Lines/$count desc,Number' }), keysOf(sortRows(O, [(o) => o.Lines.length, 'desc'], (o) => o.Number))),
  valueCase(`Employees?$ORDERBY=${encodeURIComponent('Age DESC')}`, keysOf(sortRows(E, [(e) => e.Age, 'desc']))),
  valueCase(`Employees?orderby=${encodeURIComponent('Name desc')}`, keysOf(sortRows(E, [(e) => e.Name, 'desc']))),
]

const pagingCases: QueryCase[] = [
  valueCase(url('Employees', { $top: 5 }), keysOf(sortRows(E).slice(0, 5))),
  valueCase(url('Employees', { $skip: 25 }), keysOf(sortRows(E).slice(25))),
  valueCase(url('Employees', { $top: 3, $skip: 4, $orderby: 'Name' }), keysOf(sortRows(E, (e) => e.Name).slice(4, 7))),
  valueCase(url('Employees', { $top: 0 }), []),
  valueCase(url('Employees', { $skip: 100 }), []),
  valueCase(url('Employees', { $filter: 'Active', $orderby: 'Age desc', $top: 4, $skip: 2 }), keysOf(sortRows(E.filter((e) => e.Active), [(e) => e.Age, 'desc']).slice(2, 6))),
  valueCase('Employees?top=2&skip=1', keysOf(sortRows(E).slice(1, 3))),
  valueCase('Employees?$TOP=2&$Skip=1', keysOf(sortRows(E).slice(1, 3))),
  valueCase(url(`Departments(${D[1].Guid})/Employees`, { $select: 'Name', $orderby: 'Name' }), sortRows(D[1].Employees, (e) => e.Name).map(named)),
  valueCase(url(`Employees(${ada.Guid})/Reports`, { $filter: 'Age gt 30' }), keysOf(sortRows(ada.Reports.filter((e) => gt(e.Age, 30))))),
  valueCase(url(`Airports(${A[0].Guid})/Departures`, { $orderby: 'Departure desc', $top: 2 }), keysOf(sortRows(A[0].Departures, [(f) => f.Departure, 'desc']).slice(0, 2))),
]

const all = (e: Employee) => ({
  ...project(e, ['Title', 'Name', 'Nickname', 'Level', 'HireDate', 'LastLogin', 'StartTime', 'Active', 'Rating', 'Salary', 'Age', 'ManagerGuid', 'MentorGuid', 'DepartmentGuid']),
  DisplayName: displayName(e),
})

const selectCases: QueryCase[] = [
  valueCase(url('Employees', { $select: 'Name' }), sortRows(E).map(named)),
  valueCase(url('Employees', { $select: 'Name,Age' }), sortRows(E).map((e) => project(e, ['Name', 'Age']))),
  valueCase(url('Employees', { $select: '*' }), sortRows(E).map(all)),
  valueCase(url('Employees', { $select: 'DisplayName' }), sortRows(E).map((e) => ({ Guid: e.Guid, DisplayName: displayName(e) }))),
  valueCase(url('Employees', { $select: 'DisplayName,Nickname' }), sortRows(E).map((e) => ({ ...project(e, ['Nickname']), DisplayName: displayName(e) }))),
  valueCase(url('Employees', { $select: 'Guid' }), keysOf(sortRows(E))),
  valueCase(url('Employees', { $select: 'ManagerGuid,DepartmentGuid' }), sortRows(E).map((e) => project(e, ['ManagerGuid', 'DepartmentGuid']))),
  valueCase(
    url('Employees', { $select: 'Level,HireDate,LastLogin,StartTime,Active,Rating,Salary' }),
    sortRows(E).map((e) => project(e, ['Level', 'HireDate', 'LastLogin', 'StartTime', 'Active', 'Rating', 'Salary'])),
  ),
  valueCase(url('Employees', { $select: 'Name,DisplayName', $orderby: 'Salary desc', $top: 3 }), sortRows(E, [(e) => e.Salary, 'desc']).slice(0, 3).map((e) => ({ ...named(e), DisplayName: displayName(e) }))),
  valueCase(url('Employees', { $select: 'Name,*' }), sortRows(E).map(all)),
  valueCase(`Employees?select=Name&$top=2`, sortRows(E).slice(0, 2).map(named)),
  valueCase(url('Flights', { $select: 'Number,Departure,Price,FromGuid', $filter: "From/Code eq 'FRA'" }), sortRows(F.filter((f) => f.From.Code === 'FRA')).map((f) => project(f, ['Number', 'Departure', 'Price', 'FromGuid']))),
  valueCase(url('Departments', { $select: 'Code,Name,Budget' }), sortRows(D).map((d) => project(d, ['Code', 'Name', 'Budget']))),
]

const withManagerChain = (e: Employee | null, levels: number): unknown =>
  e === null ? null : levels === 0 ? { Guid: e.Guid } : { Guid: e.Guid, Manager: withManagerChain(e.Manager, levels - 1) }
const withReports = (e: Employee, levels: number): unknown =>
  levels === 0 ? named(e) : { ...named(e), Reports: sortRows(e.Reports).map((r) => withReports(r, levels - 1)) }

const expandCases: QueryCase[] = [
  valueCase(url('Employees', { $select: 'Name', $expand: 'Manager' }), sortRows(E).map((e) => ({ ...named(e), Manager: key(e.Manager) }))),
  // A navigation property in $select names its link, not data (OData 4.01 URL Conventions 5.1.3).
  valueCase(url('Employees', { $select: 'Name,Manager,Reports' }), sortRows(E).map(named)),
  valueCase(url('Employees', { $select: 'Name,Manager', $expand: 'Manager' }), sortRows(E).map((e) => ({ ...named(e), Manager: key(e.Manager) }))),
  valueCase(url('Employees', { $expand: 'Manager($select=Name)' }), sortRows(E).map((e) => ({ Guid: e.Guid, Manager: e.Manager && named(e.Manager) }))),
  valueCase(
    url('Employees', { $select: 'Name', $expand: 'Manager($select=Name;$expand=Manager($select=Name))' }),
    sortRows(E).map((e) => ({ ...named(e), Manager: e.Manager && { ...named(e.Manager), Manager: e.Manager.Manager && named(e.Manager.Manager) } })),
  ),
  valueCase(url('Employees', { $expand: 'Reports' }), sortRows(E).map((e) => ({ Guid: e.Guid, Reports: keysOf(sortRows(e.Reports)) }))),
  valueCase(
    url('Employees', { $expand: 'Reports($select=Name;$orderby=Age desc;$top=2)' }),
    sortRows(E).map((e) => ({ Guid: e.Guid, Reports: sortRows(e.Reports, [(r) => r.Age, 'desc']).slice(0, 2).map(named) })),
  ),
  valueCase(
    url('Employees', { $expand: 'Reports($filter=Active;$count=true)' }),
    sortRows(E).map((e) => ({ Guid: e.Guid, Reports: keysOf(sortRows(e.Reports.filter((r) => r.Active))), 'Reports@odata.count': e.Reports.filter((r) => r.Active).length })),
  ),
  valueCase(
    url('Employees', { $expand: 'Reports($skip=1;$top=1;$orderby=Name)' }),
    sortRows(E).map((e) => ({ Guid: e.Guid, Reports: keysOf(sortRows(e.Reports, (r) => r.Name).slice(1, 2)) })),
  ),
  valueCase(url('Employees', { $expand: 'Department($select=Code)' }), sortRows(E).map((e) => ({ Guid: e.Guid, Department: e.Department && project(e.Department, ['Code']) }))),
  valueCase(
    url('Employees', { $expand: 'Mentor($select=Name),Manager($select=Name)' }),
    sortRows(E).map((e) => ({ Guid: e.Guid, Mentor: e.Mentor && named(e.Mentor), Manager: e.Manager && named(e.Manager) })),
  ),
  valueCase(url('Employees', { $expand: 'Manager($levels=2)' }), sortRows(E).map((e) => ({ Guid: e.Guid, Manager: withManagerChain(e.Manager, 1) }))),
  valueCase(url('Employees', { $expand: 'Manager($levels=max)' }), sortRows(E).map((e) => ({ Guid: e.Guid, Manager: withManagerChain(e.Manager, 4) }))),
  valueCase(url('Employees', { $select: 'Name', $filter: 'Manager eq null', $expand: 'Reports($levels=2;$select=Name)' }), sortRows(E.filter((e) => e.Manager === null)).map((e) => withReports(e, 2))),
  valueCase(
    url('Employees', { $select: 'Name', $filter: `Guid eq ${ada.Guid}`, $expand: 'Reports($select=Name;$expand=Reports($select=Name;$orderby=Name desc))' }),
    [{ ...named(ada), Reports: sortRows(ada.Reports).map((r) => ({ ...named(r), Reports: sortRows(r.Reports, [(x) => x.Name, 'desc']).map(named) })) }],
  ),
  valueCase(
    url('Flights', { $select: 'Number', $expand: 'From($select=Code),To($select=Code)' }),
    sortRows(F).map((f) => ({ ...project(f, ['Number']), From: project(f.From, ['Code']), To: project(f.To, ['Code']) })),
  ),
  valueCase(
    url('Airports', { $select: 'Code', $expand: "Departures($filter=Status eq 'Cancelled';$select=Number),Arrivals($count=true;$top=0)" }),
    sortRows(A).map((a) => ({
      ...project(a, ['Code']),
      Departures: sortRows(a.Departures.filter((f) => f.Status === 'Cancelled')).map((f) => project(f, ['Number'])),
      Arrivals: [],
      'Arrivals@odata.count': a.Arrivals.length,
    })),
  ),
  valueCase(
    url('Orders', { $select: 'Number', $expand: 'Lines($expand=Product($select=Code);$select=Quantity;$orderby=Quantity desc)' }),
    sortRows(O).map((o) => ({
      ...project(o, ['Number']),
      Lines: sortRows(o.Lines, [(l) => l.Quantity, 'desc']).map((l) => ({ ...project(l, ['Quantity']), Product: project(l.Product, ['Code']) })),
    })),
  ),
  valueCase(
    url('Customers', { $select: 'Name', $expand: 'Orders($select=Number;$expand=Lines($select=Quantity;$top=1))' }),
    sortRows(C).map((c) => ({
      ...project(c, ['Name']),
      Orders: sortRows(c.Orders).map((o) => ({ ...project(o, ['Number']), Lines: sortRows(o.Lines).slice(0, 1).map((l) => project(l, ['Quantity'])) })),
    })),
  ),
  valueCase(
    url('Departments', { $select: 'Code', $expand: 'Employees($select=Name;$filter=Age gt 50;$orderby=Age desc;$top=2;$count=true)' }),
    sortRows(D).map((d) => {
      const older = d.Employees.filter((e) => gt(e.Age, 50))
      return { ...project(d, ['Code']), Employees: sortRows(older, [(e) => e.Age, 'desc']).slice(0, 2).map(named), 'Employees@odata.count': older.length }
    }),
  ),
  valueCase(url('Employees', { $expand: 'Reports($select=DisplayName)' }), sortRows(E).map((e) => ({ Guid: e.Guid, Reports: sortRows(e.Reports).map((r) => ({ Guid: r.Guid, DisplayName: displayName(r) })) }))),
  valueCase(
    url('Employees', { $select: 'Name', $expand: 'Manager($select=DisplayName),Reports($select=DisplayName,Name;$top=1)' }),
    sortRows(E).map((e) => ({
      ...named(e),
      Manager: e.Manager && { Guid: e.Manager.Guid, DisplayName: displayName(e.Manager) },
      Reports: sortRows(e.Reports).slice(0, 1).map((r) => ({ ...named(r), DisplayName: displayName(r) })),
    })),
  ),
  valueCase(
    url('Employees', { $filter: `Guid eq ${grace.Guid}`, $expand: '*($levels=2)' }),
    [{
      Guid: grace.Guid,
      Manager: { Guid: ada.Guid, Manager: null },
      Mentor: null,
      Department: key(grace.Department),
      Reports: sortRows(grace.Reports).map((r) => ({ Guid: r.Guid, Reports: keysOf(sortRows(r.Reports)) })),
      Mentees: sortRows(grace.Mentees).map((m) => ({ Guid: m.Guid, Mentees: keysOf(sortRows(m.Mentees)) })),
      Flights: keysOf(sortRows(grace.Flights)),
    }],
  ),
  valueCase(url('Departments', { $expand: '*' }), sortRows(D).map((d) => ({ Guid: d.Guid, Employees: keysOf(sortRows(d.Employees)) }))),
  valueCase(
    url('Flights', { $select: 'Number', $expand: '*,From($select=City)' }),
    sortRows(F).map((f) => ({ ...project(f, ['Number']), From: project(f.From, ['City']), To: key(f.To), Pilot: key(f.Pilot) })),
  ),
  valueCase(
    url('Employees', { $select: 'Name', $filter: 'Flights/any()', $expand: 'Flights($select=Number;$orderby=Number;$expand=Pilot($select=Name),From($select=City))' }),
    sortRows(E.filter((e) => e.Flights.length > 0)).map((e) => ({
      ...named(e),
      Flights: sortRows(e.Flights, (f) => f.Number).map((f) => ({ ...project(f, ['Number']), Pilot: named(e), From: project(f.From, ['City']) })),
    })),
  ),
  valueCase(url('Employees', { $select: 'Name,Manager/Name,Manager/Age' }), sortRows(E).map((e) => ({ ...named(e), Manager: e.Manager && project(e.Manager, ['Name', 'Age']) }))),
  valueCase(url('Employees', { $select: 'Manager/Manager/Name' }), sortRows(E).map((e) => ({ Guid: e.Guid, Manager: e.Manager && { Guid: e.Manager.Guid, Manager: e.Manager.Manager && named(e.Manager.Manager) } }))),
  valueCase(url('Employees', { $select: 'Name,Reports/Name', $expand: 'Reports($orderby=Name desc)' }), sortRows(E).map((e) => ({ ...named(e), Reports: sortRows(e.Reports, [(r) => r.Name, 'desc']).map(named) }))),
  valueCase(`Employees?$expand=Reports(select=Name;top=1)`, sortRows(E).map((e) => ({ Guid: e.Guid, Reports: sortRows(e.Reports).slice(0, 1).map(named) }))),
  valueCase(`Employees?$EXPAND=Reports($TOP=1;$SELECT=Name)`, sortRows(E).map((e) => ({ Guid: e.Guid, Reports: sortRows(e.Reports).slice(0, 1).map(named) }))),
  valueCase(url('Employees', { $select: 'Name', $expand: 'Reports($select=Name;$filter=Manager/Name eq $it/Name)', $top: 3 }), sortRows(E).slice(0, 3).map((e) => ({ ...named(e), Reports: sortRows(e.Reports).map(named) }))),
]

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer()
})
afterAll(async () => {
  await server?.stop()
})

describe('$orderby', () => {
  it.each(orderbyCases.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, queryCase) => {
    await expectValue(server, queryCase)
  })
})

describe('$top, $skip and navigation from one entity', () => {
  it.each(pagingCases.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, queryCase) => {
    await expectValue(server, queryCase)
  })
})

describe('$select', () => {
  it.each(selectCases.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, queryCase) => {
    await expectValue(server, queryCase)
  })
})

describe('$select of bound operations (URL Conventions 4.01 §5.1.3)', () => {
  const order = () => data.orders[0].Guid

  it('takes an instance method by its qualified name, and advertises it on each entity (JSON 4.01 §16)', async () => {
    const minimal = await server.get(url(`Orders(${order()})`, { $select: 'Number,entityctl.Close' }))
    expect(minimal.status, minimal.text).toBe(200)
    expect(minimal.body['@odata.context']).toMatch(/#Orders\(Number,entityctl\.Close\)\/\$entity$/)
    expect(minimal.body).toMatchObject({ Number: data.orders[0].Number, '#entityctl.Close': {} })
    const all = await server.get(url('Orders', { $select: 'Number,entityctl.*', $top: 1 }))
    expect(all.body.value[0], all.text).toHaveProperty('#entityctl.Close')
    const full = await server.get(url(`Orders(${order()})`, { $select: 'Number,entityctl.Close' }), { Accept: 'application/json;odata.metadata=full' })
    expect(full.body['#entityctl.Close'], full.text).toEqual({ title: expect.any(String), target: `Orders(${order()})/entityctl.Close` })
    const none = await server.get(url(`Orders(${order()})`, { $select: 'Number,entityctl.Close' }), { Accept: 'application/json;odata.metadata=none' })
    expect(none.body, none.text).not.toHaveProperty('#entityctl.Close')
  })

  it('ignores an operation that cannot be bound to the entities, as the specification asks', async () => {
    // Revenue is bound to a Customer, OpenSince to the collection of orders.
    for (const operation of ['entityctl.Revenue', 'entityctl.OpenSince']) {
      const response = await server.get(url(`Orders(${order()})`, { $select: `Number,${operation}` }))
      expect(response.status, response.text).toBe(200)
      expect(Object.keys(response.body).filter((name) => name.startsWith('#')), operation).toEqual([])
    }
  })
})

describe('$expand', () => {
  it.each(expandCases.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, queryCase) => {
    await expectValue(server, queryCase)
  })
})

describe('$count', () => {
  const countCases: [string, number][] = [
    ['Employees/$count', E.length],
    [url('Employees/$count', { $filter: 'Active eq true' }), E.filter((e) => e.Active).length],
    [url('Employees/$count', { $filter: "Manager/Name eq 'Ada Lovelace'" }), ada.Reports.length],
    [`Departments(${D[1].Guid})/Employees/$count`, D[1].Employees.length],
    [url('Orders/$count', { $filter: 'Lines/$count gt 3' }), O.filter((o) => o.Lines.length > 3).length],
    [url('Flights/$count', { $filter: 'From/Country eq To/Country' }), F.filter((f) => f.From.Country === f.To.Country).length],
  ]
  it.each(countCases)('%s answers the count as text', async (path, count) => {
    const response = await server.get(path)
    expect(response.status, response.text).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(response.text).toBe(String(count))
  })

  it.each([
    [url('Employees', { $count: 'true', $top: 2 }), E.length, 2],
    [url('Employees', { $count: 'true', $filter: 'Active' }), E.filter((e) => e.Active).length, E.filter((e) => e.Active).length],
    [url('Employees', { $count: 'true', $filter: 'Age gt 40', $skip: 3, $top: 1 }), E.filter((e) => gt(e.Age, 40)).length, 1],
    [url('Employees', { $count: 'TRUE', $top: 0 }), E.length, 0],
    [`Employees?count=true&$filter=${encodeURIComponent('Reports/any()')}`, E.filter((e) => e.Reports.length > 0).length, E.filter((e) => e.Reports.length > 0).length],
  ])('%s carries @odata.count', async (path, count, rows) => {
    const response = await server.get(path)
    expect(response.status, response.text).toBe(200)
    expect(response.body['@odata.count']).toBe(count)
    expect(response.body.value).toHaveLength(rows)
  })

  it('leaves @odata.count out for $count=false', async () => {
    const response = await server.get(url('Employees', { $count: 'false', $top: 1 }))
    expect(response.status).toBe(200)
    expect(response.body).not.toHaveProperty('@odata.count')
  })
})

describe('one entity', () => {
  it('reads by key with $select and $expand, with its ETag', async () => {
    const response = await server.get(url(`Employees(${alan.Guid})`, { $select: 'Name,DisplayName', $expand: 'Reports($select=Name;$orderby=Name)' }))
    expect(response.status, response.text).toBe(200)
    expect(response.headers.get('etag')).toMatch(etagAt(1))
    expect(withoutEtags(response.body)).toEqual({
      '@odata.context': expect.stringContaining('$metadata#Employees(Name,DisplayName,Reports(Name))/$entity'),
      ...named(alan),
      DisplayName: displayName(alan),
      Reports: sortRows(alan.Reports, (r) => r.Name).map(named),
    })
  })

  // A path through a navigation in $select (or in an expansion's $select) puts that navigation
  // in the answer as an expansion, so the context URL names it as one, with the properties
  // selected in it (OData 4.01 JSON 10.9): `Customer(Name)`, never `Customer/Name`.
  const order = O[0]
  const customer = { Guid: order.Customer.Guid, Name: order.Customer.Name }
  const contextCases: [string, string, Record<string, unknown>][] = [
    ['$select=Number,Customer/Name&$expand=Customer', 'Number,Customer(Name)', { Number: order.Number, Customer: customer }],
    ['$select=Number,Customer/Name', 'Number,Customer(Name)', { Number: order.Number, Customer: customer }],
    ['$select=Number,Customer/entityctl.Customer/Name', 'Number,Customer(Name)', { Number: order.Number, Customer: customer }],
    ['$select=Number,Customer/Name&$expand=Customer($select=City)', 'Number,Customer(City,Name)', { Number: order.Number, Customer: { ...customer, City: order.Customer.City } }],
    ['$select=Number,Customer/Name&$expand=*', 'Number,Customer(Name),Lines(Guid)', { Number: order.Number, Customer: customer, Lines: keysOf(sortRows(order.Lines)) }],
    [
      '$expand=Customer($select=Name,Orders/Number)',
      'Guid,Customer(Name,Orders(Number))',
      { Customer: { ...customer, Orders: sortRows(order.Customer.Orders).map((o) => project(o, ['Number'])) } },
    ],
  ]
  it.each(contextCases)('names %s in the context URL as the answer carries it', async (query, list, body) => {
    const response = await server.get(`Orders(${order.Guid})?${query}`)
    expect(response.status, response.text).toBe(200)
    expect(response.body['@odata.context']).toBe(`${server.server.api}/$metadata#Orders(${list})/$entity`)
    expect(withoutEtags(response.body)).toEqual({ '@odata.context': response.body['@odata.context'], Guid: order.Guid, ...body })
  })

  it('names a path through two navigations in a collection context URL as two expansions', async () => {
    const response = await server.get(url('Employees', { $select: 'Manager/Manager/Name', $top: 1 }))
    expect(response.status, response.text).toBe(200)
    expect(response.body['@odata.context']).toBe(`${server.server.api}/$metadata#Employees(Manager(Manager(Name)))`)
  })

  it('reads by key as a segment', async () => {
    const response = await server.get(url(`Employees/${zoe.Guid}`, { $select: 'Name' }))
    expect(response.status, response.text).toBe(200)
    expect(response.body.Name).toBe(zoe.Name)
  })

  it('follows a reference from one entity', async () => {
    const response = await server.get(url(`Employees(${grace.Guid})/Manager`, { $select: 'Name' }))
    expect(response.status, response.text).toBe(200)
    expect(response.body.Name).toBe(ada.Name)
  })

  it('answers 404 for an unknown key', async () => {
    const response = await server.get(`Employees(${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)})`)
    expect(response.status).toBe(404)
    expect(response.body.error.code).toBe('NotFound')
  })
})
