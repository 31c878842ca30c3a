import { describe, expect, it } from 'vitest'
import { parseParameterValue, parseQueryOptions } from '../../../server/odata/parser/query-options-parser.ts'
import type { QueryOptionsSyntax } from '../../../server/odata/parser/syntax.ts'
import { errorOf, show, showApply, showExpand, showOrderby, showSelect } from './notation.ts'

/** Every present option in the compact notation, in a fixed order. */
function summary(options: QueryOptionsSyntax): string {
  const parts: string[] = []
  if (options.filter) parts.push(`filter=${show(options.filter)}`)
  if (options.orderby) parts.push(`orderby=${showOrderby(options.orderby)}`)
  if (options.select) parts.push(`select=${showSelect(options.select)}`)
  if (options.expand) parts.push(`expand=${showExpand(options.expand)}`)
  if (options.apply) parts.push(`apply=${showApply(options.apply)}`)
  if (options.compute) parts.push(`compute=${options.compute.map((c) => `${show(c.expression)} as ${c.alias}`).join(', ')}`)
  for (const key of ['top', 'skip', 'count', 'skiptoken', 'format'] as const) {
    if (options[key] !== undefined) parts.push(`${key}=${options[key]}`)
  }
  for (const [name, value] of options.aliases) parts.push(`${name}=${show(value)}`)
  for (const [name, value] of options.custom) parts.push(`custom ${name}=${value}`)
  return parts.join(' & ')
}

const VALID: [string, string][] = [
  ['', ''],
  ['?', ''],
  ["$filter=Name eq 'x'", "filter=(eq Name 'x')"],
  ["$filter=Name%20eq%20'x'", "filter=(eq Name 'x')"],
  ['$filter=Name%20eq%20%27O%27%27Neil%27', "filter=(eq Name 'O''Neil')"],
  ["$filter=Name%20eq%20'a%26b'", "filter=(eq Name 'a&b')"],
  ["$filter=Name%20eq%20'a=b'", "filter=(eq Name 'a=b')"],
  ["$filter=Name eq 'a+b'", "filter=(eq Name 'a+b')"],
  ['$filter=Created%20gt%202024-01-31T10:00:00+02:00', 'filter=(gt Created dateTimeOffset:2024-01-31T10:00:00+02:00)'],
  ['$filter=Created%20gt%202024-01-31T10:00:00%2B02:00', 'filter=(gt Created dateTimeOffset:2024-01-31T10:00:00+02:00)'],
  ['%24filter=Active', 'filter=Active'],
  ['filter=Active', 'filter=Active'],
  ['$FILTER=Active', 'filter=Active'],
  ['Filter=Active', 'filter=Active'],
  ['$orderby=Name%20desc,Total', 'orderby=Name desc, Total asc'],
  ['$select=Name,Customer/Name', 'select=Name, Customer/Name'],
  ['$select=*', 'select=*'],
  ['$expand=Lines($filter=Quantity%20gt%201;$select=Quantity)', 'expand=Lines{filter:(gt Quantity 1); select:Quantity}'],
  ['$apply=aggregate(Total%20with%20sum%20as%20Revenue)', 'apply=aggregate(Total sum as Revenue)'],
  ['$compute=Price%20mul%20Quantity%20as%20Amount', 'compute=(mul Price Quantity) as Amount'],
  ['$top=5&$skip=10', 'top=5 & skip=10'],
  ['$top=0', 'top=0'],
  ['top=5&skip=0', 'top=5 & skip=0'],
  ['$count=true', 'count=true'],
  ['$count=FALSE', 'count=false'],
  ['$skiptoken=abc%3D%3D', 'skiptoken=abc=='],
  ['$format=json', 'format=json'],
  ['$format=application/json;odata.metadata=minimal', 'format=application/json;odata.metadata=minimal'],
  ["@p='x'&$filter=Name%20eq%20@p", "filter=(eq Name @p) & @p='x'"],
  ["%40p=('a','b')&$filter=Name%20in%20@p", "filter=(in Name @p) & @p=['a','b']"],
  ['@n=5&@m=(1%20add%202)', '@n=5 & @m=(add 1 2)'],
  ['before=2024-01-01', 'custom before=2024-01-01'],
  ['before=2024-01-01&status=Open', 'custom before=2024-01-01 & custom status=Open'],
  ['flag', 'custom flag='],
  ['name=a+b', 'custom name=a+b'],
  ['Name=x&name=y', 'custom Name=x & custom name=y'],
  ['$top=5&&$skip=1&', 'top=5 & skip=1'],
  [
    "$filter=Status%20eq%20'Open'&$orderby=Total%20desc&$select=Number,Total&$expand=Customer($select=Name)&$top=20&$count=true",
    "filter=(eq Status 'Open') & orderby=Total desc & select=Number, Total & expand=Customer{select:Name} & top=20 & count=true",
  ],
]

const MALFORMED: [string, string, string][] = [
  ['$filter=Name%20eq', '$filter', 'an expression expected, found end of input at position 7'],
  ["$filter=Name+eq+'x'", '$filter', "unexpected '+' (in a URL '+' is a plus sign, not a space: encode spaces as %20) at position 4"],
  ['$filter=Created%20gt%202024-01-31T10:00:00%2002:00', '$filter', 'time zone expected'],
  ['$filter=a&$filter=b', 'query string', '$filter is given more than once at position 10'],
  ['$filter=a&filter=b', 'query string', '$filter is given more than once'],
  ['$top=1&$TOP=2', 'query string', '$top is given more than once at position 7'],
  ['@p=1&@p=2', 'query string', '@p is given more than once'],
  ['x=1&x=2', 'query string', 'x is given more than once'],
  ['$filter=', 'query string', '$filter has no value at position 0'],
  ['$top', 'query string', '$top has no value'],
  ['@p=', 'query string', '@p has no value'],
  ['@1p=5', 'query string', "invalid parameter alias name '@1p'"],
  ['$top=1&=5', 'query string', "a query option name expected before '=' at position 7"],
  ['$fliter=a', 'query string', "unknown system query option '$fliter'; did you mean '$filter'? at position 0"],
  ['$foo=1', 'query string', "unknown system query option '$foo'"],
  ['$levels=2', 'query string', '$levels is only allowed inside $expand, as in $expand=Manager($levels=2)'],
  ['$top=-1', '$top', "a non-negative integer expected, found '-1' at position 0"],
  ['$top=1.5', '$top', "a non-negative integer expected, found '1.5' at position 1"],
  ['$top=ten', '$top', "a non-negative integer expected, found 'ten'"],
  ['$top=%205', '$top', "a non-negative integer expected, found ' 5'"],
  ['$skip=99999999999999999999', '$skip', '99999999999999999999 is too large'],
  ['$count=yes', '$count', "true or false expected, found 'yes'"],
  ['$count=1', '$count', "true or false expected, found '1'"],
  ['$filter=Name%zzeq', 'query string', "malformed percent-encoding '%zz' at position 12"],
  ['$filter=Name%2', 'query string', "malformed percent-encoding '%2' at position 12"],
  ['$filter=%FF', 'query string', 'percent-encoded bytes that are not UTF-8 at position 8'],
  ['%ZZ=1', 'query string', "malformed percent-encoding '%ZZ' at position 0"],
  ["$filter=Name%20eq%20'a%00b'", 'query string', 'a NUL character (%00), which no name or value may hold at position 22'],
  ["$filter=Name%20eq%20'a%C3%28'", 'query string', 'percent-encoded bytes that are not UTF-8 at position 22'],
  ['$filter=%ED%A0%80', 'query string', 'percent-encoded bytes that are not UTF-8 at position 8'],
  ['before=a%00', 'query string', 'a NUL character (%00), which no name or value may hold at position 8'],
  ['$orderby=Name%20descending', '$orderby', "found 'descending'"],
  ['$select=Name,,Total', '$select', "a property name or * expected, found ','"],
  ['$expand=Lines(', '$expand', 'a query option such as $filter or $select expected'],
  ['$apply=groupby(Status)', '$apply', "'(' and the grouping properties"],
  ['$compute=Price', '$compute', "'as' and an alias expected"],
  ['@p=Name%20eq', '@p', 'an expression expected, found end of input at position 7'],
]

describe('parseQueryOptions', () => {
  it.each(VALID)('parses %s', (input, expected) => {
    expect(summary(parseQueryOptions(input))).toBe(expected)
  })

  it('gives positions inside the decoded option value', () => {
    expect(parseQueryOptions("$filter=Name%20eq%20'x'").filter).toMatchObject({ position: 5, left: { position: 0 }, right: { position: 8 } })
  })

  it('keeps alias references in the tree and values apart, for the binder to resolve', () => {
    const options = parseQueryOptions('$filter=Total%20gt%20@min&@min=100')
    expect(options.filter).toMatchObject({ right: { kind: 'alias', name: '@min' } })
    expect(options.aliases.get('@min')).toMatchObject({ kind: 'literal', type: 'int', value: 100 })
  })

  it('returns empty alias and custom maps when there are none', () => {
    const options = parseQueryOptions('$top=1')
    expect(options.aliases.size).toBe(0)
    expect(options.custom.size).toBe(0)
  })

  it.each(MALFORMED)('rejects %s naming %s', (input, target, message) => {
    const error = errorOf(() => parseQueryOptions(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.status).toBe(400)
    expect(error.target).toBe(target)
    expect(error.message).toContain(message)
  })

  it.each([
    ['$index=1', '$index'],
    ['$deltatoken=x', '$deltatoken'],
    ['$schemaversion=1', '$schemaversion'],
    ['$id=Orders(1)', '$id'],
  ])('answers %s with 501 NotImplemented', (input, option) => {
    const error = errorOf(() => parseQueryOptions(input))
    expect(error.code).toBe('NotImplemented')
    expect(error.message).toContain(`the ${option} query option is not supported`)
  })

  it('refuses a query string longer than the parser reads with QueryLimitExceeded', () => {
    const error = errorOf(() => parseQueryOptions(`$filter=${'a'.repeat(40_000)}`))
    expect(error.code).toBe('QueryLimitExceeded')
    expect(error.message).toContain('40008 characters long')
  })
})

describe('parseParameterValue', () => {
  it.each([
    ['2024-01-01', 'date:2024-01-01'],
    ["'Open'", "'Open'"],
    ['-5', '-5'],
    ["('a','b')", "['a','b']"],
    ['()', '[]'],
    ['(5)', '5'],
    ["Sales.Color'Red'", "enum:Sales.Color'Red'"],
    ['@other', '@other'],
  ])('parses %s', (input, expected) => {
    expect(show(parseParameterValue(input, 'before'))).toBe(expected)
  })

  it('names the parameter in errors', () => {
    const error = errorOf(() => parseParameterValue('2024-13-01', 'before'))
    expect(error.message).toBe("Invalid before: invalid date '2024-13-01': no such day at position 0 in '2024-13-01'.")
  })
})
