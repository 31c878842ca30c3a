import { describe, expect, it } from 'vitest'
import { countExpressionNodes, countNodes } from '../../../server/odata/parser/node-count.ts'
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
  ])('counts %s as %i nodes', (input, expected) => {
    expect(countNodes(parseQueryOptions(input))).toBe(expected)
  })

  it('counts a filter of 50 comparisons as 199 nodes, well above MaxNodeCount', () => {
    const filter = Array.from({ length: 50 }, (_, i) => `Total%20eq%20${i}`).join('%20or%20')
    expect(countNodes(parseQueryOptions(`$filter=${filter}`))).toBe(50 * 3 + 49)
  })
})
