import { describe, expect, it } from 'vitest'
import { parseResourcePath } from '../../../server/odata/parser/resource-path-parser.ts'
import { errorOf, showPath } from './notation.ts'

const KEY = '0b5f9c3e-1a2b-4c5d-8e9f-0123456789ab'

const VALID: [string, string][] = [
  ['', ''],
  ['/', ''],
  ['Orders', 'Orders'],
  ['/Orders', 'Orders'],
  ['Orders/', 'Orders'],
  [`Orders(${KEY})`, `Orders(guid:${KEY})`],
  [`Orders(Guid=${KEY})`, `Orders(Guid=guid:${KEY})`],
  [`Orders/${KEY}`, `Orders / key:guid:${KEY}`],
  [`Orders(${KEY})/Lines`, `Orders(guid:${KEY}) / Lines`],
  [`Orders(${KEY})/Customer/Orders`, `Orders(guid:${KEY}) / Customer / Orders`],
  [`Orders(${KEY})/Lines/$count`, `Orders(guid:${KEY}) / Lines / $count`],
  ['Orders/$count', 'Orders / $count'],
  [`Orders(${KEY})/Lines/$ref`, `Orders(guid:${KEY}) / Lines / $ref`],
  [`Orders(${KEY})/Number/$value`, `Orders(guid:${KEY}) / Number / $value`],
  [`Orders(${KEY})/Close()`, `Orders(guid:${KEY}) / Close()`],
  [`Orders(${KEY})/Close`, `Orders(guid:${KEY}) / Close`],
  ['Orders/OpenSince()', 'Orders / OpenSince()'],
  ["Orders/OpenSince(before=2024-01-01,status='Open')", "Orders / OpenSince(before=date:2024-01-01,status='Open')"],
  ['Orders/OpenSince(before=@d)', 'Orders / OpenSince(before=@d)'],
  ['Orders/Sales.OpenSince(limit=-5,flag=true)', 'Orders / Sales.OpenSince(limit=-5,flag=true)'],
  ['Orders/Sales.Close', 'Orders / Sales.Close'],
  ['$metadata', '$metadata'],
  ["Orders('O''Neil')", "Orders('O''Neil')"],
  ['Orders(%27a%2Fb%27)', "Orders('a/b')"],
  ['Orders(%270b5f%27)', "Orders('0b5f')"],
  ['Caf%C3%A9s', 'Cafés'],
  ['Orders(42)', 'Orders(42)'],
  [`Orders/${KEY}/Lines`, `Orders / key:guid:${KEY} / Lines`],
  ['Orders/DEADBEEF-0000-1111-2222-333344445555', 'Orders / key:guid:deadbeef-0000-1111-2222-333344445555'],
  ['Orders(Guid=@k)', 'Orders(Guid=@k)'],
]

const MALFORMED: [string, string][] = [
  ['Orders//Lines', 'empty path segment at position 7'],
  ['Orders(', "a key value, or name=value expected, found end of input at position 7"],
  [`Orders(${KEY}`, "',' or ')' expected, found end of input"],
  ['Orders(Guid=)', "a literal or parameter alias for Guid expected, found ')' at position 12"],
  ['Orders(Name)', "a key value, or name=value expected, found 'Name' at position 7"],
  ['Orders(1)(2)', "'/' or end of path expected, found '(' at position 9"],
  ["Orders('x", 'unterminated string literal: closing quote expected at position 7'],
  ['$count', "'$count' must follow a resource, as in Orders/$count at position 0"],
  ['Orders/$metadata', "'$metadata' is only allowed right after the service root at position 7"],
  ['$metadata/Orders', "nothing may follow '$metadata', found '/' at position 9"],
  ['Orders/$count/Lines', "nothing may follow '$count', found '/' at position 13"],
  ['Orders/$Count', "unknown segment '$Count' at position 7"],
  ['Orders/$foo', "unknown segment '$foo' at position 7"],
  [KEY, `an entity set name expected, found '${KEY}' at position 0`],
  ['Orders/Sales.*', "invalid segment 'Sales.*' at position 7"],
  ['Orders/%zz', "malformed percent-encoding '%zz' at position 7"],
  ['Orders/%C3', 'percent-encoded bytes that are not UTF-8 at position 7'],
  ["Customers('a%00b')", 'a NUL character (%00), which no name or value may hold at position 12'],
  ['Orders/-', "a path segment expected, found '-' at position 7"],
  ['Orders(a.b=1)', 'a parameter or key name expected'],
]

describe('parseResourcePath', () => {
  it.each(VALID)('parses %s', (input, expected) => {
    expect(showPath(parseResourcePath(input).segments)).toBe(expected)
  })

  it('gives each segment and argument its position in the decoded path', () => {
    expect(parseResourcePath(`/Orders(Guid=${KEY})/Lines`).segments).toEqual([
      {
        kind: 'name',
        name: 'Orders',
        position: 0,
        args: [{ name: 'Guid', position: 7, value: { kind: 'literal', type: 'guid', value: KEY, text: KEY, position: 12 } }],
      },
      { kind: 'name', name: 'Lines', args: undefined, position: 50 },
    ])
  })

  it('tells "no parentheses" (args undefined) from "()" (args empty)', () => {
    const [, close, open] = [...parseResourcePath('Orders/Close').segments, ...parseResourcePath('Orders/Close()').segments.slice(1)]
    expect(close).toMatchObject({ kind: 'name', name: 'Close', args: undefined })
    expect(open).toMatchObject({ kind: 'name', name: 'Close', args: [] })
  })

  it.each(MALFORMED)('rejects %s', (input, message) => {
    const error = errorOf(() => parseResourcePath(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.target).toBe('resource path')
    expect(error.message).toContain(message)
  })

  it.each([
    ['$batch', '$batch'],
    ['$entity', 'the $entity segment'],
    ['$crossjoin(Orders,Customers)', 'the $crossjoin segment'],
    ['Orders/$each', 'the $each segment'],
  ])('answers %s with 501 NotImplemented', (input, what) => {
    const error = errorOf(() => parseResourcePath(input))
    expect(error.code).toBe('NotImplemented')
    expect(error.message).toContain(`${what} is not supported at position`)
  })

  it('refuses a path longer than the parser reads with QueryLimitExceeded', () => {
    expect(errorOf(() => parseResourcePath(`Orders/${'a'.repeat(40_000)}`)).code).toBe('QueryLimitExceeded')
  })
})
