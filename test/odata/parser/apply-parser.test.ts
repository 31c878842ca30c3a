import { describe, expect, it } from 'vitest'
import { parseApply, parseCompute } from '../../../server/odata/parser/apply-parser.ts'
import { errorOf, show, showApply } from './notation.ts'

const VALID: [string, string][] = [
  ["filter(Status eq 'Open')", "filter((eq Status 'Open'))"],
  ['aggregate(Total with sum as Revenue)', 'aggregate(Total sum as Revenue)'],
  [
    'aggregate(Total with sum as Revenue, Price with min as Cheapest, Price with max as Dearest, Total with average as Mean)',
    'aggregate(Total sum as Revenue, Price min as Cheapest, Price max as Dearest, Total average as Mean)',
  ],
  ['aggregate($count as N)', 'aggregate(count as N)'],
  ['aggregate(Customer/Guid with countdistinct as Customers)', 'aggregate(Customer/Guid countdistinct as Customers)'],
  ['aggregate(Lines/$count as LineCount)', 'aggregate(Lines/$count count as LineCount)'],
  ['aggregate(Price mul Quantity with sum as Amount)', 'aggregate((mul Price Quantity) sum as Amount)'],
  ['groupby((Status))', 'groupby([Status])'],
  ['groupby((Status,Customer/Name))', 'groupby([Status,Customer/Name])'],
  ['groupby((Status),aggregate(Total with sum as Revenue))', 'groupby([Status], aggregate(Total sum as Revenue))'],
  [
    'groupby((Customer/Name),filter(Total gt 5)/aggregate($count as N))',
    'groupby([Customer/Name], filter((gt Total 5)) / aggregate(count as N))',
  ],
  [
    "filter(Status eq 'Open')/groupby((Customer/Name),aggregate(Total with sum as Revenue))",
    "filter((eq Status 'Open')) / groupby([Customer/Name], aggregate(Total sum as Revenue))",
  ],
  ['compute(Price mul Quantity as Amount)', 'compute((mul Price Quantity) as Amount)'],
  ['compute(year(OrderDate) as Year, tolower(Name) as Lower)', 'compute(year(OrderDate) as Year, tolower(Name) as Lower)'],
  ['orderby(Revenue desc, Name)', 'orderby(Revenue desc, Name asc)'],
  ['top(5)', 'top(5)'],
  ['skip(10)', 'skip(10)'],
  [
    'groupby((Status),aggregate(Total with sum as Revenue))/orderby(Revenue desc)/top(3)',
    'groupby([Status], aggregate(Total sum as Revenue)) / orderby(Revenue desc) / top(3)',
  ],
  ['FILTER(a eq 1)/GroupBy((a))', 'filter((eq a 1)) / groupby([a])'],
  ['aggregate(Total WITH SUM AS Revenue)', 'aggregate(Total sum as Revenue)'],
  ['groupby( ( Status , Name ) , aggregate( $count as N ) )', 'groupby([Status,Name], aggregate(count as N))'],
  ['filter(Lines/any(l:l/Quantity gt 8))/aggregate(Total with sum as T)', 'filter(Lines/any(l:(gt l/Quantity 8))) / aggregate(Total sum as T)'],
]

const MALFORMED: [string, string][] = [
  ['', 'a transformation such as filter(…), groupby(…) or aggregate(…) expected, found end of input at position 0'],
  ['filtr(a eq 1)', "unknown transformation 'filtr'; did you mean 'filter'? at position 0"],
  ['frobnicate(1)', "unknown transformation 'frobnicate' at position 0"],
  ['filter', "'(' after filter expected, found end of input at position 6"],
  ['filter(a eq 1', "an operator or ')' expected, found end of input at position 13"],
  ['filter(a eq 1)/', 'a transformation such as filter(…), groupby(…) or aggregate(…) expected, found end of input at position 15'],
  ['filter(a eq 1) aggregate($count as N)', "'/' or end of input expected, found 'aggregate' at position 15"],
  ['aggregate(Total as Revenue)', "an operator or 'with' and an aggregation method expected, found 'as' at position 16"],
  ['aggregate(Total with total as Revenue)', "unknown aggregation method 'total' at position 21"],
  ['aggregate(Total with summ as Revenue)', "unknown aggregation method 'summ'; did you mean 'sum'? at position 21"],
  ['aggregate(Total with sum)', "an operator or 'as' and an alias expected, found ')' at position 24"],
  ['aggregate(Total with sum as)', "an alias name after as expected, found ')' at position 27"],
  ['aggregate(Total with sum as Sales.Revenue)', "an alias name after as expected, found 'Sales.Revenue'"],
  ['aggregate(Total wth sum as X)', "unknown operator 'wth'; did you mean 'with'? at position 16"],
  ['aggregate($count)', "an operator or 'as' and an alias expected, found ')' at position 16"],
  ['groupby(Status)', "'(' and the grouping properties, as in groupby((Status),…) expected, found 'Status' at position 8"],
  ['groupby(())', "a grouping property expected, found ')' at position 9"],
  ['groupby((Status)', "')' expected, found end of input at position 16"],
  ['groupby((Status) aggregate($count as N))', "an operator or ')' expected, found 'aggregate' at position 17"],
  ['groupby((tolower(Name)))', "',' or ')' expected, found '(' at position 16"],
  ['compute(Price mul 2)', "an operator or 'as' and an alias expected, found ')' at position 19"],
  ['top(-1)', "a non-negative integer for top expected, found '-1' at position 4"],
  ["skip('2')", "a non-negative integer for skip expected, found ''2''"],
  ['top(5', "')' expected, found end of input"],
]

describe('parseApply', () => {
  it.each(VALID)('parses %s', (input, expected) => {
    expect(showApply(parseApply(input))).toBe(expected)
  })

  it('records each transformation and aggregation position', () => {
    const [filter, groupby] = parseApply("filter(a eq 1)/groupby((b),aggregate(c with sum as d))")
    expect(filter.position).toBe(0)
    expect(groupby.position).toBe(15)
    expect(groupby.kind === 'groupby' && groupby.transformations[0].position).toBe(27)
  })

  it.each(MALFORMED)('rejects %s', (input, message) => {
    const error = errorOf(() => parseApply(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.target).toBe('$apply')
    expect(error.message).toContain(message)
  })

  it.each([
    ['expand(Lines,filter(Quantity gt 1))', "the transformation 'expand'"],
    ['concat(top(1),skip(1))', "the transformation 'concat'"],
    ['identity', "the transformation 'identity'"],
    ['topcount(5,Total)', "the transformation 'topcount'"],
    ['groupby((rollup(Year,Month)),aggregate($count as N))', 'rollup'],
    ['aggregate(Total with Custom.median as M)', "the custom aggregation method 'Custom.median'"],
    ['aggregate(Total with sum from Month with average as A)', "aggregation 'from'"],
  ])('answers %s with 501 NotImplemented', (input, what) => {
    const error = errorOf(() => parseApply(input))
    expect(error.code).toBe('NotImplemented')
    expect(error.message).toContain(`${what} is not supported`)
  })
})

describe('parseCompute', () => {
  it.each([
    ['Price mul Quantity as Amount', '(mul Price Quantity) as Amount'],
    ['year(OrderDate) as Year,Total add 1 as Next', 'year(OrderDate) as Year | (add Total 1) as Next'],
  ])('parses %s', (input, expected) => {
    expect(parseCompute(input).map((item) => `${show(item.expression)} as ${item.alias}`).join(' | ')).toBe(expected)
  })

  it.each([
    ['Price mul Quantity', "an operator or 'as' and an alias expected, found end of input"],
    ['Price as Amount Other', "',' or end of input expected, found 'Other'"],
  ])('rejects %s', (input, message) => {
    const error = errorOf(() => parseCompute(input))
    expect(error.target).toBe('$compute')
    expect(error.message).toContain(message)
  })
})
