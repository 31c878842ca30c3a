// $apply (OData Data Aggregation): filter, groupby (by navigation paths too), aggregate with
// sum/min/max/average/countdistinct/$count, compute, orderby/top/skip after the aggregation,
// and $filter/$orderby/$top/$skip/$count on the aggregated result. Expected rows are grouped
// and aggregated in JavaScript over the fixture objects.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ANY_ETAG } from '../../support/entity-tags.ts'
import { data } from './cases.ts'
import { startQueryServer, url, type QueryServer } from './query-server.ts'
import { compare, compareText, gt, LEVELS, rank, sortRows } from './reference.ts'

const { customers: Cs, employees: E, flights: F, orders: O, lines: L, products: P } = data

type Row = Record<string, unknown>

/** groupby in JavaScript: one output row per distinct key, `aggregate` computed from its rows. */
function groupRows<T>(rows: readonly T[], key: (row: T) => Row, aggregate: (rows: T[]) => Row = () => ({})): Row[] {
  const groups = new Map<string, { key: Row; rows: T[] }>()
  for (const row of rows) {
    const k = key(row)
    const id = JSON.stringify(k)
    if (!groups.has(id)) groups.set(id, { key: k, rows: [] })
    groups.get(id)!.rows.push(row)
  }
  return [...groups.values()].map((group) => ({ ...group.key, ...aggregate(group.rows) }))
}

const present = <T>(values: readonly (T | null | undefined)[]) => values.filter((v): v is T => v !== null && v !== undefined)
const sum = (values: readonly (number | null | undefined)[]) => (present(values).length ? present(values).reduce((a, b) => a + b, 0) : null)
const min = <T extends string | number | boolean>(values: readonly (T | null | undefined)[]) => (present(values).length ? present(values).reduce((a, b) => (compare(a, b) <= 0 ? a : b)) : null)
const max = <T extends string | number | boolean>(values: readonly (T | null | undefined)[]) => (present(values).length ? present(values).reduce((a, b) => (compare(a, b) >= 0 ? a : b)) : null)
const average = (values: readonly (number | null | undefined)[]) => (present(values).length ? sum(values)! / present(values).length : null)
const countDistinct = (values: readonly unknown[]) => new Set(present(values)).size

/** Decimal sums and averages come back exact; compare at 6 places. */
function normalize(value: unknown): unknown {
  if (typeof value === 'number') return Math.round(value * 1e6) / 1e6
  if (Array.isArray(value)) return value.map(normalize)
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]))
  return value
}

const unordered = (rows: readonly unknown[]) => (normalize(rows) as unknown[]).map((r) => JSON.stringify(r)).sort()

/**
 * A row an aggregation produced, as answered: a transient instance, `"@odata.id": null` (OData
 * JSON §4.5.8, 4.0 payloads must say so), its groups through navigations too (Data Aggregation
 * 3.2.3: instances "without entity-id"). Rows of filter/search/compute alone stay entities.
 */
function transient(row: Row): Row {
  const nested = Object.entries(row).map(([name, value]) => [name, value && typeof value === 'object' && !Array.isArray(value) ? transient(value as Row) : value])
  return { '@odata.id': null, ...Object.fromEntries(nested) }
}
const aggregates = (path: string) => /(groupby|aggregate)\(/i.test(decodeURIComponent(path))

interface ApplyCase {
  readonly path: string
  readonly expected: Row[]
  /** The request fixes the order; otherwise rows compare as a set. */
  readonly ordered?: boolean
  readonly count?: number
}

const byRevenue = (rows: Row[]) => [...rows].sort((a, b) => (b.Revenue as number) - (a.Revenue as number))
const revenueByCustomer = groupRows(O, (o) => ({ Customer: { Name: o.Customer.Name } }), (rows) => ({ Revenue: sum(rows.map((o) => o.Total)) }))
const countByStatus = groupRows(O, (o) => ({ Status: o.Status }), (rows) => ({ N: rows.length }))
const nullsFirst = (a: unknown, b: unknown) => (a === null ? (b === null ? 0 : -1) : b === null ? 1 : compare(a as string, b as string))
// Enumerations order by their members, in $apply as in $filter and $orderby.
const STATUS = rank(['Open', 'Closed'])
const byStatus = (a: Row, b: Row) => nullsFirst(STATUS(a.Status as string | null), STATUS(b.Status as string | null))
// A customer with several orders, not all of them: $apply on its Orders must see only its own.
const C = [...Cs].sort((a, b) => b.Orders.length - a.Orders.length)[0]
const openBefore = (date: string) => O.filter((o) => o.Status === 'Open' && o.OrderDate !== null && o.OrderDate < date)
const revenueCounts = groupRows(O, (o) => ({ Customer: { Name: o.Customer.Name } }), (rows) => ({ N: rows.length }))
const byCountThenName = [...revenueCounts].sort((a, b) => (a.N as number) - (b.N as number) || compareText((a.Customer as Row).Name as string, (b.Customer as Row).Name as string))

const CASES: ApplyCase[] = [
  { path: url('Orders', { $apply: 'aggregate(Total with sum as Revenue)' }), expected: [{ Revenue: sum(O.map((o) => o.Total)) }] },
  { path: url('Orders', { $apply: 'aggregate($count as N)' }), expected: [{ N: O.length }] },
  { path: url('Orders', { $apply: 'groupby((Status))' }), expected: groupRows(O, (o) => ({ Status: o.Status })) },
  { path: url('Orders', { $apply: 'groupby((Status),aggregate($count as N))' }), expected: countByStatus },
  {
    path: url('Orders', { $apply: 'groupby((Customer/Country),aggregate(Total with sum as Revenue))' }),
    expected: groupRows(O, (o) => ({ Customer: { Country: o.Customer.Country } }), (rows) => ({ Revenue: sum(rows.map((o) => o.Total)) })),
  },
  {
    path: url('Orders', { $apply: 'groupby((Customer/Country,Status),aggregate(Total with sum as Revenue,$count as N))' }),
    expected: groupRows(O, (o) => ({ Customer: { Country: o.Customer.Country }, Status: o.Status }), (rows) => ({ Revenue: sum(rows.map((o) => o.Total)), N: rows.length })),
  },
  {
    path: url('Orders', { $apply: "filter(Status eq 'Closed')/groupby((Customer/Name),aggregate(Total with max as M))" }),
    expected: groupRows(O.filter((o) => o.Status === 'Closed'), (o) => ({ Customer: { Name: o.Customer.Name } }), (rows) => ({ M: max(rows.map((o) => o.Total)) })),
  },
  {
    path: url('Orders', { $apply: 'aggregate(Total with min as Lo,Total with max as Hi,Total with average as Avg)' }),
    expected: [{ Lo: min(O.map((o) => o.Total)), Hi: max(O.map((o) => o.Total)), Avg: average(O.map((o) => o.Total)) }],
  },
  { path: url('Orders', { $apply: 'aggregate(Customer/Country with countdistinct as Countries)' }), expected: [{ Countries: countDistinct(O.map((o) => o.Customer.Country)) }] },
  {
    path: url('Employees', { $apply: 'groupby((Department/Name),aggregate(Salary with average as AvgSalary))' }),
    expected: groupRows(E, (e) => ({ Department: { Name: e.Department?.Name ?? null } }), (rows) => ({ AvgSalary: average(rows.map((e) => e.Salary)) })),
  },
  { path: url('Employees', { $apply: 'groupby((Level))' }), expected: groupRows(E, (e) => ({ Level: e.Level })) },
  {
    path: url('Employees', { $apply: 'groupby((Manager/Name),aggregate($count as Reports))' }),
    expected: groupRows(E, (e) => ({ Manager: { Name: e.Manager?.Name ?? null } }), (rows) => ({ Reports: rows.length })),
  },
  {
    path: url('OrderLines', { $apply: 'compute(Quantity mul UnitPrice as Amount)/aggregate(Amount with sum as Total)' }),
    expected: [{ Total: sum(L.map((l) => (l.UnitPrice === null ? null : l.Quantity * l.UnitPrice))) }],
  },
  { path: url('Orders', { $apply: 'groupby((Status),aggregate($count as N))/filter(N gt 5)' }), expected: countByStatus.filter((r) => gt(r.N as number, 5)) },
  {
    path: url('Orders', { $apply: 'groupby((Customer/Name),aggregate(Total with sum as Revenue))/orderby(Revenue desc)/top(2)' }),
    expected: byRevenue(revenueByCustomer).slice(0, 2),
    ordered: true,
  },
  {
    path: url('Orders', { $apply: 'groupby((Customer/Name),aggregate(Total with sum as Revenue))/orderby(Revenue desc)/skip(1)' }),
    expected: byRevenue(revenueByCustomer).slice(1),
    ordered: true,
  },
  {
    path: url('Orders', { $apply: 'groupby((Customer/Name),aggregate(Total with sum as Revenue))', $orderby: 'Revenue desc', $top: 2 }),
    expected: byRevenue(revenueByCustomer).slice(0, 2),
    ordered: true,
  },
  {
    path: url('Orders', { $apply: 'groupby((Customer/Name),aggregate(Total with sum as Revenue))', $count: true, $top: 1, $orderby: 'Customer/Name' }),
    expected: [...revenueByCustomer].sort((a, b) => compare((a.Customer as Row).Name as string, (b.Customer as Row).Name as string)).slice(0, 1),
    ordered: true,
    count: revenueByCustomer.length,
  },
  {
    path: url('Flights', { $apply: 'groupby((From/Code,To/Country),aggregate(Price with sum as P))' }),
    expected: groupRows(F, (f) => ({ From: { Code: f.From.Code }, To: { Country: f.To.Country } }), (rows) => ({ P: sum(rows.map((f) => f.Price)) })),
  },
  { path: url('Orders', { $apply: 'filter(Lines/$count gt 3)/aggregate($count as N)' }), expected: [{ N: O.filter((o) => o.Lines.length > 3).length }] },
  { path: url('Orders', { $apply: 'groupby((CustomerGuid),aggregate($count as N))' }), expected: groupRows(O, (o) => ({ CustomerGuid: o.CustomerGuid }), (rows) => ({ N: rows.length })) },
  {
    path: url('Orders', { $apply: 'groupby((Status),aggregate(Lines/$count with sum as LineCount))' }),
    expected: groupRows(O, (o) => ({ Status: o.Status }), (rows) => ({ LineCount: sum(rows.map((o) => o.Lines.length)) })),
  },
  {
    path: url('Employees', { $apply: 'groupby((Manager/Manager/Name),aggregate(Age with max as Oldest))' }),
    expected: groupRows(E, (e) => ({ Manager: { Manager: { Name: e.Manager?.Manager?.Name ?? null } } }), (rows) => ({ Oldest: max(rows.map((e) => e.Age)) })),
  },
  { path: url('Orders', { $apply: 'groupby((Status),aggregate($count as N))', $filter: 'N gt 5' }), expected: countByStatus.filter((r) => gt(r.N as number, 5)) },
  {
    path: url('Orders', { $apply: 'groupby((Status),aggregate($count as N))', $orderby: 'Status' }),
    expected: [...countByStatus].sort(byStatus),
    ordered: true,
  },
  {
    path: url('Orders', { $apply: 'groupby((Status),aggregate($count as N))', $orderby: 'Status desc', $skip: 1 }),
    expected: [...countByStatus].sort((a, b) => byStatus(b, a)).slice(1),
    ordered: true,
  },
  {
    path: url('Employees', { $apply: 'aggregate(Rating with average as R, Rating with sum as S, HireDate with min as First, LastLogin with max as Last)' }),
    expected: [{ R: average(E.map((e) => e.Rating)), S: sum(E.map((e) => e.Rating)), First: min(E.map((e) => e.HireDate)), Last: max(E.map((e) => e.LastLogin)) }],
  },
  {
    path: url('Employees', { $apply: 'groupby((Active),aggregate(Salary with sum as Payroll, Salary with min as Low))' }),
    expected: groupRows(E, (e) => ({ Active: e.Active }), (rows) => ({ Payroll: sum(rows.map((e) => e.Salary)), Low: min(rows.map((e) => e.Salary)) })),
  },
  {
    path: url('Orders', { $apply: "filter(Customer/Country eq 'DE' and Status ne null)/groupby((Status),aggregate(Total with average as A))" }),
    expected: groupRows(O.filter((o) => o.Customer.Country === 'DE' && o.Status !== null), (o) => ({ Status: o.Status }), (rows) => ({ A: average(rows.map((o) => o.Total)) })),
  },
  {
    path: url('Flights', { $apply: 'groupby((Status),aggregate(Minutes with sum as M, $count as N))', $orderby: 'M desc' }),
    expected: groupRows(F, (f) => ({ Status: f.Status }), (rows) => ({ M: sum(rows.map((f) => f.Minutes)), N: rows.length })).sort((a, b) => (b.M as number) - (a.M as number)),
    ordered: true,
  },
  {
    path: url('Orders', { $apply: 'compute(Total mul 2 as T2)/filter(T2 gt 500)' }),
    expected: O.filter((o) => gt(o.Total === null ? null : o.Total * 2, 500)).map((o) => ({ Guid: o.Guid, T2: o.Total! * 2 })),
  },
  { path: url('Orders', { $apply: 'filter(Total gt 500)' }), expected: O.filter((o) => gt(o.Total, 500)).map((o) => ({ Guid: o.Guid })) },
  {
    path: url('OrderLines', { $apply: 'groupby((Product/Category),aggregate(Quantity with sum as Q, LineTotal with max as Biggest))' }),
    expected: groupRows(L, (l) => ({ Product: { Category: l.Product.Category } }), (rows) => ({ Q: sum(rows.map((l) => l.Quantity)), Biggest: max(rows.map((l) => l.LineTotal)) })),
  },
  {
    path: url('Employees', { $apply: 'groupby((Department/Code,Level),aggregate($count as N))', $filter: 'N ge 2', $orderby: 'N desc,Department/Code,Level' }),
    expected: groupRows(E, (e) => ({ Department: { Code: e.Department?.Code ?? null }, Level: e.Level }), (rows) => ({ N: rows.length }))
      .filter((r) => (r.N as number) >= 2)
      .sort((a, b) => (b.N as number) - (a.N as number) || nullsFirst((a.Department as Row).Code, (b.Department as Row).Code) || nullsFirst(LEVELS(a.Level as string | null), LEVELS(b.Level as string | null))),
    ordered: true,
  },
  { path: url('Employees', { $apply: 'aggregate(Age with countdistinct as Ages)' }), expected: [{ Ages: countDistinct(E.map((e) => e.Age)) }] },
  {
    path: url('Orders', { $apply: 'groupby((OrderDate),aggregate($count as N))', $filter: 'OrderDate eq null' }),
    expected: groupRows(O.filter((o) => o.OrderDate === null), (o) => ({ OrderDate: o.OrderDate }), (rows) => ({ N: rows.length })),
  },
  {
    path: url('Employees', { $apply: 'filter(LastLogin ne null)/groupby((LastLogin))', $orderby: 'LastLogin', $top: 3 }),
    expected: present(E.map((e) => e.LastLogin)).sort().slice(0, 3).map((LastLogin) => ({ LastLogin })),
    ordered: true,
  },
  {
    path: url('Orders', { $apply: 'groupby((Status),aggregate($count as N))', $count: true, $filter: 'N lt 10' }),
    expected: countByStatus.filter((r) => (r.N as number) < 10),
    count: countByStatus.filter((r) => (r.N as number) < 10).length,
  },
  {
    path: `Orders?apply=${encodeURIComponent('groupby((Status),aggregate($count as N))')}`,
    expected: countByStatus,
  },
  {
    path: `Orders?$APPLY=${encodeURIComponent('GroupBy((Status),Aggregate($count as N))')}`,
    expected: countByStatus,
  },
  {
    path: url('Orders', { $apply: 'groupby((Status),aggregate(Total with sum as Revenue))/filter(Revenue gt @min)', '@min': 1000 }),
    expected: groupRows(O, (o) => ({ Status: o.Status }), (rows) => ({ Revenue: sum(rows.map((o) => o.Total)) })).filter((r) => gt(r.Revenue as number, 1000)),
  },
  // The addressed collection is what $apply transforms: a navigation's members, a function's result.
  { path: url(`Customers(${C.Guid})/Orders`, { $apply: 'aggregate(Total with sum as S)' }), expected: [{ S: sum(C.Orders.map((o) => o.Total)) }] },
  { path: url(`Customers(${C.Guid})/Orders`, { $apply: 'aggregate($count as N)' }), expected: [{ N: C.Orders.length }] },
  {
    path: url(`Customers(${C.Guid})/Orders`, { $apply: 'groupby((Status),aggregate($count as N))' }),
    expected: groupRows(C.Orders, (o) => ({ Status: o.Status }), (rows) => ({ N: rows.length })),
  },
  {
    path: url(`Customers(${C.Guid})/Orders`, { $apply: 'filter(Total gt 0)', $count: true }),
    expected: C.Orders.filter((o) => gt(o.Total, 0)).map((o) => ({ Guid: o.Guid })),
    count: C.Orders.filter((o) => gt(o.Total, 0)).length,
  },
  { path: url('Orders/OpenSince(before=2024-06-01)', { $apply: 'aggregate($count as N)' }), expected: [{ N: openBefore('2024-06-01').length }] },
  {
    path: url('Orders/OpenSince(before=2024-06-01)', { $apply: 'groupby((Customer/Name),aggregate(Total with sum as S))' }),
    expected: groupRows(openBefore('2024-06-01'), (o) => ({ Customer: { Name: o.Customer.Name } }), (rows) => ({ S: sum(rows.map((o) => o.Total)) })),
  },
  // A filter keeps the entities: $orderby sorts them by their properties and paths, key last.
  {
    path: url('Orders', { $apply: 'filter(Total gt 0)', $orderby: 'Number desc', $top: 5 }),
    expected: sortRows(O.filter((o) => gt(o.Total, 0)), [(o) => o.Number, 'desc']).slice(0, 5).map((o) => ({ Guid: o.Guid })),
    ordered: true,
  },
  {
    path: url('Orders', { $apply: 'filter(Total gt 0)', $orderby: 'Customer/Name', $skip: 2 }),
    expected: sortRows(O.filter((o) => gt(o.Total, 0)), (o) => o.Customer.Name).slice(2).map((o) => ({ Guid: o.Guid })),
    ordered: true,
  },
  {
    path: url('Products', { $apply: 'search(steel)', $orderby: 'Code desc' }),
    expected: sortRows(P.filter((p) => /steel/i.test(p.Name)), [(p) => p.Code, 'desc']).map((p) => ({ Guid: p.Guid })),
    ordered: true,
  },
  {
    path: url('Employees', { $apply: 'filter(Age gt 30)', $orderby: 'Level desc,Name' }),
    expected: sortRows(E.filter((e) => gt(e.Age, 30)), [(e) => LEVELS(e.Level), 'desc'], (e) => e.Name).map((e) => ({ Guid: e.Guid })),
    ordered: true,
  },
  // min and max of every ordered type: Guid as uuid sorts, Boolean false before true.
  {
    path: url('Orders', { $apply: 'aggregate(Guid with max as M, Guid with min as m, CustomerGuid with min as C)' }),
    expected: [{ M: max(O.map((o) => o.Guid)), m: min(O.map((o) => o.Guid)), C: min(O.map((o) => o.CustomerGuid)) }],
  },
  { path: url('Employees', { $apply: 'aggregate(Active with max as M, Active with min as m)' }), expected: [{ M: max(E.map((e) => e.Active)), m: min(E.map((e) => e.Active)) }] },
  {
    path: url('Employees', { $apply: 'groupby((Department/Code),aggregate(Active with min as AllActive))' }),
    expected: groupRows(E, (e) => ({ Department: { Code: e.Department?.Code ?? null } }), (rows) => ({ AllActive: min(rows.map((e) => e.Active)) })),
  },
  { path: url('Employees', { $apply: 'compute(true as Z)/aggregate(Z with max as M)' }), expected: [{ M: true }] },
  // After a groupby its properties are the key: they break ties, so pages neither repeat nor lose rows.
  {
    path: url('Orders', { $apply: 'groupby((Customer/Name),aggregate($count as N))', $orderby: 'N' }),
    expected: byCountThenName,
    ordered: true,
  },
  // Enumerations keep their member order through $apply.
  {
    path: url('Orders', { $apply: 'aggregate(Status with max as M, Status with min as m)' }),
    expected: [{ M: 'Closed', m: 'Open' }],
  },
  {
    path: url('Employees', { $apply: 'groupby((Level),aggregate(Level with max as M))/orderby(Level desc)' }),
    expected: groupRows(E, (e) => ({ Level: e.Level }), (rows) => ({ M: rows[0].Level })).sort((a, b) => nullsFirst(LEVELS(b.Level as string | null), LEVELS(a.Level as string | null))),
    ordered: true,
  },
  {
    path: url('Employees', { $apply: 'groupby((Level),aggregate($count as N))', $filter: "Level gt 'Senior'", $orderby: 'Level' }),
    expected: groupRows(E.filter((e) => gt(LEVELS(e.Level), 2)), (e) => ({ Level: e.Level }), (rows) => ({ N: rows.length })).sort((a, b) => (LEVELS(a.Level as string)! - LEVELS(b.Level as string)!)),
    ordered: true,
  },
  {
    path: url('Employees', { $apply: 'aggregate(Level with max as M)', $filter: "M ge 'Lead'" }),
    expected: [{ M: E.map((e) => e.Level).filter((l) => l !== null).sort((a, b) => LEVELS(a)! - LEVELS(b)!).at(-1) }],
  },
  // compute() aliases are properties of the rows after it: groupby and $orderby name them.
  {
    path: url('Orders', { $apply: 'compute(year(OrderDate) as Y)/groupby((Y),aggregate($count as N))' }),
    expected: groupRows(O, (o) => ({ Y: o.OrderDate === null ? null : Number(o.OrderDate.slice(0, 4)) }), (rows) => ({ N: rows.length })),
  },
  {
    path: url('Orders', { $apply: 'compute(Total mul 2 as D)', $filter: 'D gt 100', $orderby: 'D desc', $top: 3 }),
    expected: sortRows(O.filter((o) => gt(o.Total === null ? null : o.Total * 2, 100)), [(o) => o.Total, 'desc']).slice(0, 3).map((o) => ({ Guid: o.Guid, D: o.Total! * 2 })),
    ordered: true,
  },
]

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer()
})
afterAll(async () => {
  await server?.stop()
})

describe('$apply', () => {
  it.each(CASES.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, { path, expected: rows, ordered, count }) => {
    const response = await server.get(path)
    expect(response.status, response.text).toBe(200)
    // Rows that are still entities carry their etag, as a read of them does: checked, then set aside.
    const entities = !aggregates(path)
    if (entities) for (const row of response.body.value as Row[]) expect(row['@odata.etag'], path).toMatch(ANY_ETAG)
    const value = entities ? (response.body.value as Row[]).map(({ '@odata.etag': _, ...row }) => row) : (response.body.value as Row[])
    const expected = entities ? rows : rows.map(transient)
    if (ordered) expect(normalize(value)).toEqual(normalize(expected))
    else expect(unordered(value)).toEqual(unordered(expected))
    if (count !== undefined) expect(response.body['@odata.count']).toBe(count)
    // The context lists what the aggregation produced: each member of a row is named in it.
    const list = /\$metadata#\w+\((.+)\)$/.exec(response.body['@odata.context'])?.[1]
    expect(list, response.body['@odata.context']).toBeDefined()
    for (const name of Object.keys(value[0] ?? {}).filter((key) => !key.startsWith('@'))) expect(list).toMatch(new RegExp(`(^|[,(])${name}([,(]|$)`))
  })
})

describe('$apply: aggregated rows are transient instances', () => {
  const grouped = url('Orders', { $apply: 'groupby((Customer/Country),aggregate($count as N))', $orderby: 'Customer/Country', $top: 1 })

  it('marks each aggregated row, and each group nested through a navigation, "@odata.id": null, first', async () => {
    const response = await server.get(grouped)
    expect(response.status, response.text).toBe(200)
    expect(response.text).toMatch(/"value":\[\{"@odata\.id":null,"Customer":\{"@odata\.id":null,"Country":[^}]*\},"N":\d+\}\]/)
    for (const path of [url('Orders', { $apply: 'aggregate($count as N)' }), url('Employees', { $apply: 'groupby((Manager/Manager/Name))', $top: 1 })]) {
      const other = await server.get(path)
      expect(other.status, other.text).toBe(200)
      expect(other.text).toMatch(/"value":\[\{"@odata\.id":null,/)
      if (/Manager/.test(path)) expect(other.body.value[0]).toMatchObject({ '@odata.id': null, Manager: { '@odata.id': null, Manager: { '@odata.id': null } } })
    }
  })

  it('marks them with full metadata too (the 4.01 payload too: it may, and one answer serves both), and not with none', async () => {
    const full = await server.get(grouped, { Accept: 'application/json;odata.metadata=full', 'OData-MaxVersion': '4.01' })
    expect(full.status, full.text).toBe(200)
    expect(full.body.value[0]).toMatchObject({ '@odata.id': null, Customer: { '@odata.id': null } })
    const none = await server.get(grouped, { Accept: 'application/json;odata.metadata=none' })
    expect(none.status, none.text).toBe(200)
    expect(none.text).not.toContain('@odata.id')
  })

  it('leaves rows that are still entities (filter, search, compute alone) as entities: no "@odata.id": null', async () => {
    for (const apply of ['filter(Total gt 0)', 'compute(Total mul 2 as D)', 'filter(Total gt 0)/compute(Total mul 2 as D)']) {
      const response = await server.get(url('Orders', { $apply: apply, $top: 2 }))
      expect(response.status, response.text).toBe(200)
      expect(response.text, apply).not.toContain('@odata.id')
      const full = await server.get(url('Orders', { $apply: apply, $top: 2 }), { Accept: 'application/json;odata.metadata=full' })
      expect(full.text, apply).not.toContain('"@odata.id":null')
    }
  })
})

describe('$apply: rows that are still entities carry what a plain read of them carries', () => {
  // The plain read of the same entities: $compute where the pipeline computes, $filter where it filters.
  const cases: [string, Record<string, string>][] = [
    ['filter(Total gt 0)', { $filter: 'Total gt 0' }],
    ['compute(Total mul 2 as D)', { $compute: 'Total mul 2 as D' }],
    ['filter(Total gt 0)/compute(Total mul 2 as D)', { $filter: 'Total gt 0', $compute: 'Total mul 2 as D' }],
  ]

  it('in every odata.metadata, in the same order: type, id, edit link, etag, instance methods, navigation links in full', async () => {
    for (const [apply, plain] of cases) {
      for (const accept of ['application/json;odata.metadata=full', 'application/json;odata.metadata=minimal', 'application/json;odata.metadata=none']) {
        const applied = await server.get(url('Orders', { $apply: apply, $orderby: 'Guid', $top: 2 }), { Accept: accept })
        const read = await server.get(url('Orders', { ...plain, $orderby: 'Guid', $top: 2 }), { Accept: accept })
        expect([applied.status, read.status], applied.text).toEqual([200, 200])
        expect(JSON.stringify(applied.body.value), `${apply} ${accept}`).toBe(JSON.stringify(read.body.value))
      }
    }
    const full = await server.get(url('Orders', { $apply: 'filter(Total gt 0)', $top: 1 }), { Accept: 'application/json;odata.metadata=full' })
    expect(full.body.value[0]).toMatchObject({ '@odata.type': '#entityctl.Order', '@odata.id': expect.stringMatching(/^Orders\(/) })
  })
})

describe('$apply: the addressed collection, pages and /$count', () => {
  it('pages through an aggregation ordered by a value with ties, each group once', async () => {
    const path = url('Orders', { $apply: 'groupby((Customer/Name),aggregate($count as N))', $orderby: 'N' })
    const rows: Row[] = []
    for (let skip = 0; skip < revenueCounts.length; skip += 2) {
      const response = await server.get(`${path}&$top=2&$skip=${skip}`)
      expect(response.status, response.text).toBe(200)
      rows.push(...(response.body.value as Row[]))
    }
    expect(rows).toEqual(byCountThenName.map(transient))
  })

  it('pages an aggregation without $top by the server, each group once, the last page without a next link', async () => {
    const path = url('Orders', { $apply: 'groupby((Customer/Name),aggregate($count as N))', $orderby: 'N' })
    const rows: Row[] = []
    let next: string | undefined = path
    let pages = 0
    while (next) {
      const response = await server.get(next.replace(/^.*\/api\//, ''), { Prefer: 'odata.maxpagesize=2' })
      expect(response.status, response.text).toBe(200)
      expect((response.body.value as Row[]).length).toBeLessThanOrEqual(2)
      expect(response.headers.get('preference-applied')).toBe('odata.maxpagesize=2')
      rows.push(...(response.body.value as Row[]))
      next = response.body['@odata.nextLink']
      pages++
    }
    expect(rows).toEqual(byCountThenName.map(transient))
    expect(pages).toBe(Math.ceil(byCountThenName.length / 2))
  })

  it('answers each parent with its own members when the same $apply is read under another key', async () => {
    // The second read reuses the first one's statement with its key (read-plan-cache.ts).
    const [few, many] = [...Cs].sort((a, b) => a.Orders.length - b.Orders.length).filter((_, i, all) => i === 0 || i === all.length - 1)
    for (const customer of [many, few]) {
      const response = await server.get(url(`Customers(${customer.Guid})/Orders`, { $apply: 'aggregate($count as N)' }))
      expect(response.status, response.text).toBe(200)
      expect(response.body.value).toEqual([transient({ N: customer.Orders.length })])
    }
  })

  it('answers 404 for $apply under a parent that does not exist', async () => {
    const response = await server.get(url('Customers(0193a1b2-0000-7000-8000-00000000dead)/Orders', { $apply: 'aggregate($count as N)' }))
    expect(response.status, response.text).toBe(404)
    expect(response.body.error.code).toBe('NotFound')
  })

  // /$count counts the collection the other options work on, which $apply defines (Data Aggregation 3).
  it.each([
    [url('Orders/$count', { $apply: 'filter(Total gt 0)' }), O.filter((o) => gt(o.Total, 0)).length],
    [url(`Customers(${C.Guid})/Orders/$count`, { $apply: 'filter(Total gt 0)' }), C.Orders.filter((o) => gt(o.Total, 0)).length],
    [url('Orders/$count', { $apply: 'groupby((Status))' }), countByStatus.length],
    [url('Orders/$count', { $apply: 'groupby((Status),aggregate($count as N))', $filter: 'N gt 5' }), countByStatus.filter((r) => gt(r.N as number, 5)).length],
  ])('%s counts what $apply produced', async (path, expected) => {
    const response = await server.get(path)
    expect(response.status, response.text).toBe(200)
    expect(response.text).toBe(String(expected))
  })
})
