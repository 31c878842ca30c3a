// The read planner as a table: a URL on the demo model → the decisions of its plan (order
// with its tie-break and null order, page, server-driven paging, count, the most rows the
// statement returns), or the refusal of a read too large to run. Pure: no server, no SQL.

import { beforeAll, describe, expect, it } from 'vitest'
import type { Model } from '../../../server/model/model.ts'
import { ServiceError } from '../../../server/errors.ts'
import { planCollectionRead, planEntityRead, type CollectionPlan, type PlannedEntity, type SortKey } from '../../../server/odata/plan/read-plan.ts'
import { demoModel } from '../metadata/demo-model.ts'
import { bindUrl, LIMITS } from '../semantic/bind-url.ts'
import { expression } from '../semantic/bound-notation.ts'

const K = '0193a1b2-0000-7000-8000-000000000001'
const PLAN_LIMITS = { maxTop: LIMITS.maxTop, maxResultItems: 1_000_000_000 }

let model: Model
beforeAll(async () => {
  model = await demoModel()
})

function order(keys: readonly SortKey[]): string {
  return keys.map((key) => `${expression(key.expression)}${key.descending ? ' desc' : ''}${key.nulls ? ` nulls ${key.nulls}` : ''}`).join(', ')
}

/** order | page | server page | count | most rows; then each collection expand's order and page. */
function collectionPlan(plan: CollectionPlan): string {
  const parts = [
    `order ${order(plan.order) || '-'}`,
    `limit ${plan.page.limit ?? '-'} offset ${plan.page.offset}`,
    plan.serverPage ? `page ${plan.serverPage.size} next ${plan.serverPage.nextSkip}` : 'no next page',
    ...(plan.count ? ['count'] : []),
    `rows ${plan.maxRows ?? '-'}`,
  ]
  return [parts.join(' | '), ...expands(plan.entity)].join(' ; ')
}

function expands(entity: PlannedEntity): string[] {
  return entity.expands.flatMap((planned) => {
    if (planned.expand.navigation.kind === 'reference') return expands(planned.entity)
    const own = `${planned.expand.publicName}: order ${order(planned.order)} | limit ${planned.page.limit ?? '-'} offset ${planned.page.offset}${planned.count ? ' | count' : ''}`
    return [own, ...expands(planned.entity)]
  })
}

function plan(url: string): string {
  const read = bindUrl(model, url)
  if (read.kind !== 'collection') throw new Error(`${url} is not a collection`)
  return collectionPlan(planCollectionRead(read, PLAN_LIMITS))
}

describe('planCollectionRead: URL → plan', () => {
  it.each([
    // No $top: a server-driven page of MaxTop, fetched with one row more to learn whether a next page exists.
    ['Orders', 'order r0.Guid | limit 501 offset 0 | page 500 next 500 | rows 501'],
    ['Orders?$skiptoken=500', 'order r0.Guid | limit 501 offset 500 | page 500 next 1000 | rows 501'],
    // The key breaks ties; a nullable key sorts its nulls first ascending and last descending (OData), a required one needs neither.
    ['Orders?$orderby=OrderDate desc&$top=10', 'order r0.OrderDate desc nulls last, r0.Guid | limit 10 offset 0 | no next page | rows 10'],
    ['Orders?$orderby=Customer/Name&$top=10', 'order r0.Customer/Name nulls first, r0.Guid | limit 10 offset 0 | no next page | rows 10'],
    // A required natural key is already a total order: no tie-break.
    ['Orders?$orderby=Number desc&$top=10', 'order r0.Number desc | limit 10 offset 0 | no next page | rows 10'],
    ['Orders?$orderby=Guid&$top=10', 'order r0.Guid | limit 10 offset 0 | no next page | rows 10'],
    // $count: the page keeps at least one row, the count's, when it is empty.
    ['Orders?$top=0&$count=true', 'order r0.Guid | limit 0 offset 0 | no next page | count | rows 1'],
    ['Orders?$filter=Total gt 100&$top=5&$skip=10&$count=true', 'order r0.Guid | limit 5 offset 10 | no next page | count | rows 5'],
    [
      'Orders?$top=2&$expand=Lines($orderby=Quantity desc;$top=3;$count=true;$expand=Product),Customer($expand=Orders($top=1))',
      'order r0.Guid | limit 2 offset 0 | no next page | rows 2 ; Lines: order r1.Quantity desc, r1.Guid | limit 3 offset 0 | count ; Orders: order r4.Guid | limit 1 offset 0',
    ],
    // After a groupby its properties are the key: they break ties after the client's order (or the pipeline's), nulls as OData sorts them.
    ['Orders?$apply=groupby((Status),aggregate(Total with sum as Revenue))&$orderby=Revenue desc', 'order @Revenue desc nulls last, @Status nulls first | limit 501 offset 0 | page 500 next 500 | rows 501'],
    [
      'Orders?$apply=groupby((Customer/Country,Status),aggregate($count as N))&$orderby=Status desc,N&$top=50',
      'order @Status desc nulls last, @N nulls first, @Customer/Country nulls first | limit 50 offset 0 | no next page | rows 50',
    ],
    ['Orders?$apply=groupby((Status),aggregate($count as N))/orderby(N desc)/top(1)', 'order @N desc nulls last, @Status nulls first | limit 501 offset 0 | page 500 next 500 | rows 501'],
    // A single aggregate row needs no tie-break.
    ['Orders?$apply=aggregate($count as N)&$top=1&$count=true', 'order - | limit 1 offset 0 | no next page | count | rows 1'],
    // Without an aggregation the rows are entities: their order ends in the key, as any read's.
    ['Orders?$apply=filter(Total gt 0)&$orderby=Customer/Name&$top=10', 'order r0.Customer/Name nulls first, r0.Guid | limit 10 offset 0 | no next page | rows 10'],
  ])('%s', (url, expected) => {
    expect(plan(url)).toBe(expected)
  })

  it('takes the keys of the resource path, in path order', () => {
    const read = bindUrl(model, `Customers(${K})/Orders`)
    if (read.kind !== 'collection') throw new Error('a collection')
    expect(planCollectionRead(read, PLAN_LIMITS).pathKeys).toEqual([K])
    const entity = bindUrl(model, `Orders(${K})`)
    if (entity.kind !== 'entity') throw new Error('an entity')
    expect(planEntityRead(entity, PLAN_LIMITS).pathKeys).toEqual([K])
  })

  it('refuses, before any SQL, a read that could answer with more than MaxResultItems entities', () => {
    const read = bindUrl(model, 'Customers?$expand=Orders($expand=Lines($expand=Product))')
    if (read.kind !== 'collection') throw new Error('a collection')
    // 500 × (1 + 500 × (1 + 500 × 2)) = 250,250,500 (README, How replies are bounded).
    expect(() => planCollectionRead(read, { ...PLAN_LIMITS, maxResultItems: 250_250_499 })).toThrow(ServiceError)
    expect(() => planCollectionRead(read, { ...PLAN_LIMITS, maxResultItems: 250_250_500 })).not.toThrow()
  })
})
