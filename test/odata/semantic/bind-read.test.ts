// The binder as a table (odata.net's and AspNetCoreOData's binder tests): a URL on the demo
// model → the bound read, in the notation of bound-notation.ts, or the error it is refused
// with. No server, no database: binding is pure.

import { beforeAll, describe, expect, it } from 'vitest'
import type { Model } from '../../../server/model/model.ts'
import { ServiceError } from '../../../server/errors.ts'
import { demoModel } from '../metadata/demo-model.ts'
import { bindUrl } from './bind-url.ts'
import { boundRead } from './bound-notation.ts'

const K = '0193a1b2-0000-7000-8000-000000000001'

let model: Model
beforeAll(async () => {
  model = await demoModel()
})

describe('bindTargetRead: URL → bound read', () => {
  it.each([
    ['Orders', 'Orders r0 {Guid}'],
    ['Orders?$filter=Total gt 100&$select=Number', "Orders r0 {Guid,Number} filter (r0.Total gt '100':decimal)"],
    [
      "Orders?$filter=Customer/Country eq 'DE' and Status ne 'Closed'&$orderby=OrderDate desc,Number&$top=10&$skip=20&$count=true",
      "Orders r0 {Guid} filter ((r0.Customer/Country eq 'DE':string) and (r0.Status ne 'Closed':string)) orderby r0.OrderDate desc, r0.Number top 10 skip 20 count",
    ],
    // Lambda variables and expands take the next ranges, in the order they are bound.
    [
      'Orders?$filter=Lines/any(l:l/Quantity gt 8)&$expand=Lines($select=Quantity;$filter=Quantity ge 2;$orderby=Quantity desc;$top=3;$count=true)',
      'Orders r0 {Guid} expand[Lines: r1 {Guid,Quantity} filter (r1.Quantity ge 2:int) orderby r1.Quantity desc top 3 count] filter r0.Lines/any(r2: (r2.Quantity gt 8:int))',
    ],
    ['Orders?$filter=Lines/$count gt 3 and Customer eq null', 'Orders r0 {Guid} filter ((r0.Lines/$count gt 3:int) and (r0.Customer:key eq null))'],
    ["Customers?$filter=contains(Name,'steel') or Country in ('DE','FR')", "Customers r0 {Guid} filter (contains(r0.Name, 'steel':string) or (r0.Country in ['DE':string, 'FR':string]))"],
    // A path through a navigation in $select selects inside an expand of it.
    ['Customers?$select=Name,Orders/Number', 'Customers r0 {Guid,Name} expand[Orders: r1 {Guid,Number}]'],
    // A navigation property in $select names its link: no data of its own, its expansion as $expand says.
    ['Customers?$select=Name,Orders', 'Customers r0 {Guid,Name}'],
    ['Customers?$select=Orders&$expand=Orders($select=Number)', 'Customers r0 {Guid} expand[Orders: r1 {Guid,Number}]'],
    [`Orders(${K})?$select=Number,Customer,Lines`, `Orders(${K}) r0 {Guid,Number}`],
    [`Customers(${K})/Orders?$select=Number`, `Customers(${K})/Orders → Orders r0 {Guid,Number}`],
    [`Orders(${K})?$select=Number,Total&$expand=Customer($select=Name)`, `Orders(${K}) r0 {Guid,Number,Total} expand[Customer: r1 {Guid,Name}]`],
    [`Orders(${K})/Customer`, `Orders(${K})/Customer → Customers r0 {Guid}`],
    ['Orders?$skiptoken=500', 'Orders r0 {Guid} skip 500'],
    // Date and duration arithmetic: a duration literal upper-cased, a prefix-less one beside a date read as a duration.
    [
      "Orders?$filter=OrderDate sub duration'-pt1h' gt 2024-01-01 and OrderDate add 'P1D' lt now()",
      "Orders r0 {Guid} filter (((r0.OrderDate sub '-PT1H':duration) gt '2024-01-01':date) and ((r0.OrderDate add 'P1D':duration) lt now()))",
    ],
  ])('%s', (url, expected) => {
    expect(boundRead(bindUrl(model, url))).toBe(expected)
  })

  it('selects every property with ApiOptions:DefaultSelect = All', () => {
    expect(boundRead(bindUrl(model, 'Products?$top=1', 'All'))).toBe('Products r0 {Guid,Code,Name,Category,Price,Title} top 1')
  })
})

describe('bindTargetRead: URL → refusal', () => {
  it.each([
    ['Orders?$top=501', 'QueryLimitExceeded', 'MaxTop'],
    ['Orders?$filter=Nope eq 1', 'InvalidQuery', 'Nope'],
    [`Orders(${K})?$filter=Total gt 1`, 'InvalidQuery', 'apply to collections, not to a single entity'],
    [`Customers(${K})?$count=true`, 'InvalidQuery', '$count: $filter, $orderby, $top, $skip, $count, $search, $skiptoken and $apply apply to collections, not to a single entity. $count'],
    [`Customers(${K})?$search=steel`, 'InvalidQuery', '$search: $filter, $orderby, $top, $skip, $count, $search, $skiptoken and $apply apply to collections, not to a single entity. $search'],
    ['Orders?$expand=Customer($top=1)', 'InvalidQuery', 'single entity'],
    ['Orders?$expand=Lines,Lines', 'InvalidQuery', 'expanded twice'],
    ['Orders?$skiptoken=abc', 'InvalidQuery', 'not one this service issued'],
    ['Orders?$apply=aggregate(Total with sum as T)&$select=Number', 'InvalidQuery', 'cannot be combined with $apply'],
  ])('%s', (url, code, message) => {
    let error: unknown
    try {
      bindUrl(model, url)
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).code).toBe(code)
    expect(`${(error as ServiceError).message} ${(error as ServiceError).target ?? ''}`).toContain(message)
  })
})
