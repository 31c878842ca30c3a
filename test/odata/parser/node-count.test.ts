import { describe, expect, it } from 'vitest'
import { countExpressionNodes, countNodes, MAX_TREE_DEPTH, measureQuery } from '../../../server/odata/parser/node-count.ts'
import { parseReadOptions } from '../../../server/odata/handlers/read-handler.ts'
import { errorOf } from './notation.ts'
import { parseFilter } from '../../../server/odata/parser/filter-parser.ts'
import { parseQueryOptions } from '../../../server/odata/parser/query-options-parser.ts'

describe('countExpressionNodes', () => {
  it.each([
    ['Active', 1],
    ["Name eq 'x'", 3],
    ["Customer/Name eq 'x'", 4],
    ['not Active', 2],
    ["contains(Name,'x')", 3],
    ['cast(Price,Edm.Int32)', 3],
    ["Name in ('a','b','c','d','e')", 3],
    ['Lines/any()', 2],
    ['Lines/any(l:l/Quantity gt 8)', 6],
    ['Customer/Orders/$count gt 2', 5],
    ['Lines/$count($filter=Quantity gt 1)', 5],
    ["Name eq 'x' and Lines/any(l:l/Quantity gt 8)", 10],
  ])('counts %s as %i nodes', (input, expected) => {
    expect(countExpressionNodes(parseFilter(input))).toBe(expected)
  })
})

describe('countNodes', () => {
  it.each([
    ['', 0],
    ['$top=5&$skip=1&$count=true', 0],
    ['$select=Name,Total,Customer/Name', 3],
    ["$filter=Name%20eq%20'x'&$orderby=Name%20desc", 5],
    ['$expand=Customer,Lines($select=Quantity;$filter=Quantity%20gt%201)', 6],
    ['$expand=Customer($expand=Orders($expand=Lines))', 3],
    ['$apply=groupby((Status),aggregate(Total%20with%20sum%20as%20R,$count%20as%20N))', 6],
    ['$apply=filter(a%20eq%201)/top(5)', 5],
    ['$compute=Price%20mul%20Quantity%20as%20Amount', 4],
    ["$filter=Name%20eq%20@p&@p='x'", 4],
    // An alias binds to its value wherever it is named: each use costs the whole value.
    ["$filter=@p%20eq%20@p&@p=concat(Name,'x')", 1 + 3 + 3 + 3],
    // A $compute alias named again (by another, $filter, $orderby) is its expression again.
    ['$compute=Price%20mul%202%20as%20D,D%20add%20D%20as%20Q&$filter=Q%20gt%201', 4 + (1 + 1 + 3 + 3) + (1 + 7 + 1)],
    ['$apply=compute(Price%20mul%202%20as%20D)/filter(D%20gt%201)', 1 + 4 + 1 + (1 + 3 + 1)],
  ])('counts %s as %i nodes', (input, expected) => {
    expect(countNodes(parseQueryOptions(input))).toBe(expected)
  })

  it('counts aliases nesting one another as the tree they bind to, not as written', () => {
    const aliases = Array.from({ length: 30 }, (_, i) => `@a${i}=${i === 29 ? 'Name' : `concat(@a${i + 1},@a${i + 1})`}`).join('&')
    expect(countNodes(parseQueryOptions(`$filter=@a0%20eq%20'x'&${aliases}`))).toBeGreaterThan(2 ** 29)
  })

  it('counts $compute aliases built on one another as the tree they bind to', () => {
    const items = Array.from({ length: 30 }, (_, i) => `concat(${i ? `A${i - 1}` : 'Name'},${i ? `A${i - 1}` : 'Name'})%20as%20A${i}`)
    expect(countNodes(parseQueryOptions(`$compute=${items.join(',')}&$select=A29`))).toBeGreaterThan(2 ** 29)
    const transformations = items.map((item) => `compute(${item})`).join('/')
    expect(countNodes(parseQueryOptions(`$apply=${transformations}`))).toBeGreaterThan(2 ** 29)
  })

  it('counts a filter of 50 comparisons as 199 nodes, well above MaxNodeCount', () => {
    const filter = Array.from({ length: 50 }, (_, i) => `Total%20eq%20${i}`).join('%20or%20')
    expect(countNodes(parseQueryOptions(`$filter=${filter}`))).toBe(50 * 3 + 49)
  })
})

describe('measureQuery and the read options guard', () => {
  it.each([
    ['', 0],
    ['$filter=Active', 1],
    ["$filter=Name%20eq%20'x'", 2],
    ["$filter=not%20(Name%20eq%20'x')&$orderby=length(Name)", 3],
    ['$filter=a%20or%20b%20or%20c%20or%20d', 4],
    ['$expand=Lines($filter=a%20add%201%20gt%202)', 3],
  ])('measures %s as %i levels deep', (input, depth) => {
    expect(measureQuery(parseQueryOptions(input)).depth).toBe(depth)
  })

  it('measures a chain of 6500 operators without overflowing the stack', () => {
    expect(measureQuery(parseQueryOptions(`$filter=(a)${'or(a)'.repeat(6500)}`))).toEqual({ nodes: 6501 * 2 - 1, depth: 6501 })
  })

  it('refuses MaxNodeCount first, naming the count and the limit', () => {
    const error = errorOf(() => parseReadOptions(`$filter=(a)${'or(a)'.repeat(299)}`, 100))
    expect(error).toMatchObject({ code: 'QueryLimitExceeded', target: 'MaxNodeCount', message: 'MaxNodeCount is 100; the request asks for 599.' })
  })

  it.each([
    ["@a=concat(@a,'x')", '@a'],
    ["@a=concat(@b,'x')&@b=concat('y',@a)", '@a'],
  ])('refuses an alias whose value names itself (%s) as 400 InvalidQuery, which binding could never finish', (aliases, name) => {
    const error = errorOf(() => parseReadOptions(`$filter=@a%20eq%20'x'&${aliases}`, 100))
    expect(error).toMatchObject({ code: 'InvalidQuery', target: name, message: expect.stringContaining(`${name} names itself`) })
  })

  it('measures the depth of an alias where it is used', () => {
    const aliases = Array.from({ length: 20 }, (_, i) => `@a${i}=${i === 19 ? 'Name' : `concat(@a${i + 1},'x')`}`).join('&')
    expect(measureQuery(parseQueryOptions(`$filter=@a0%20eq%20'x'&${aliases}`)).depth).toBe(21)
  })

  it(`refuses a tree deeper than ${MAX_TREE_DEPTH} under a raised MaxNodeCount, which the binder could not walk`, () => {
    const error = errorOf(() => parseReadOptions(`$filter=(a)${'or(a)'.repeat(4000)}`, 100_000))
    expect(error).toMatchObject({ code: 'QueryLimitExceeded', message: expect.stringContaining(`is 4001 levels deep`) })
    expect(parseReadOptions(`$filter=(a)${'or(a)'.repeat(MAX_TREE_DEPTH - 1)}`, 100_000).filter).toBeDefined()
  })
})
