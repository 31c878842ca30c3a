import { describe, expect, it } from 'vitest'
import { parseExpand, parseSelect } from '../../../server/odata/parser/select-expand-parser.ts'
import type { ExpandItemSyntax } from '../../../server/odata/parser/syntax.ts'
import { errorOf, showExpand, showSelect } from './notation.ts'

const SELECT: [string, string][] = [
  ['Name', 'Name'],
  ['Name,Total', 'Name, Total'],
  ['Name, Total ,Guid', 'Name, Total, Guid'],
  ['*', '*'],
  ['*,Name', '*, Name'],
  ['Customer/Name', 'Customer/Name'],
  ['Sales.*', 'Sales.*'],
  ['My.Name.Space.*', 'My.Name.Space.*'],
  ['Sales.VipCustomer/Rank', 'Sales.VipCustomer/Rank'],
  ['Ünïcödé', 'Ünïcödé'],
]

const EXPAND: [string, string][] = [
  ['Customer', 'Customer'],
  ['Customer,Lines', 'Customer, Lines'],
  ['*', '*'],
  ['*/$ref', '*/$ref'],
  ['*($levels=2)', '*{levels:2}'],
  ['*(levels=max)', '*{levels:max}'],
  ['Lines/$ref', 'Lines/$ref'],
  ['Lines/$count', 'Lines/$count'],
  ['Customer/Orders', 'Customer/Orders'],
  ['Lines/Sales.SpecialLine', 'Lines/Sales.SpecialLine'],
  ['Lines($filter=Quantity gt 1)', 'Lines{filter:(gt Quantity 1)}'],
  ['Lines($select=Quantity,Product)', 'Lines{select:Quantity, Product}'],
  ['Lines($orderby=Quantity desc,Guid)', 'Lines{orderby:Quantity desc, Guid asc}'],
  ['Lines($top=5;$skip=10;$count=true)', 'Lines{top:5; skip:10; count:true}'],
  ['Lines($expand=Product)', 'Lines{expand:[Product]}'],
  ['Lines($compute=Price mul Quantity as Amount;$select=Amount)', 'Lines{select:Amount; compute:(mul Price Quantity) as Amount}'],
  ['Lines(filter=Quantity gt 1;select=Quantity)', 'Lines{filter:(gt Quantity 1); select:Quantity}'],
  ['Lines($FILTER=Quantity gt 1;$Top=2)', 'Lines{filter:(gt Quantity 1); top:2}'],
  ['Manager($levels=3)', 'Manager{levels:3}'],
  ['Manager($levels=MAX)', 'Manager{levels:max}'],
  ['Lines/$ref($filter=Quantity gt 1;$top=2;$orderby=Quantity)', 'Lines/$ref{filter:(gt Quantity 1); orderby:Quantity asc; top:2}'],
  ['Lines/$count($filter=Quantity gt 1)', 'Lines/$count{filter:(gt Quantity 1)}'],
  [
    'Customer($select=Name;$expand=Orders($filter=Total gt 100;$expand=Lines($select=Quantity;$expand=Product($select=Name))))',
    'Customer{select:Name; expand:[Orders{filter:(gt Total 100); expand:[Lines{select:Quantity; expand:[Product{select:Name}]}]}]}',
  ],
  ['Lines($filter=Quantity gt $it/MinQuantity),Customer', 'Lines{filter:(gt Quantity $it/MinQuantity)}, Customer'],
  ['Lines($expand=Product,Order;$select=Guid)', 'Lines{select:Guid; expand:[Product, Order]}'],
  ['Lines( $top=1 ; $skip=2 )', 'Lines{top:1; skip:2}'],
]

describe('parseSelect', () => {
  it.each(SELECT)('parses %s', (input, expected) => {
    expect(showSelect(parseSelect(input))).toBe(expected)
  })

  it('tags each item kind', () => {
    expect(parseSelect('*,Sales.*,Customer/Name')).toEqual([
      { kind: 'selectAll', position: 0 },
      { kind: 'selectOperations', namespace: 'Sales', position: 2 },
      { kind: 'selectPath', path: ['Customer', 'Name'], position: 10 },
    ])
  })
})

describe('parseExpand', () => {
  it.each(EXPAND)('parses %s', (input, expected) => {
    expect(showExpand(parseExpand(input))).toBe(expected)
  })

  it('leaves options absent, not undefined-valued, when none are given', () => {
    expect(parseExpand('Customer')).toEqual([
      { kind: 'expandPath', path: ['Customer'], suffix: undefined, options: {}, position: 0 },
    ])
  })

  it('parses twenty levels of nested $expand (the binder enforces MaxExpansionDepth)', () => {
    const text = `${'A($expand='.repeat(20)}B${')'.repeat(20)}`
    let items: readonly ExpandItemSyntax[] = parseExpand(text)
    let depth = 0
    while (items[0].kind === 'expandPath' && items[0].options.expand) {
      items = items[0].options.expand
      depth++
    }
    expect(depth).toBe(20)
  })
})

const MALFORMED_SELECT: [string, string][] = [
  ['', "a property name or * expected, found end of input at position 0"],
  ['Name,', "a property name or * expected, found end of input at position 5"],
  ['Name,,Total', "a property name or * expected, found ',' at position 5"],
  ['Customer/', "a property name or * expected, found end of input at position 9"],
  ['$it', "a property name or * expected, found '$it'"],
  ['Name Total', "',' or end of input expected, found 'Total' at position 5"],
  ["'Name'", "a property name or * expected, found ''Name''"],
  ['Customer/*', "a property name or * expected, found '*' at position 9"],
]

const MALFORMED_EXPAND: [string, string][] = [
  ['', 'a navigation property or * expected, found end of input at position 0'],
  ['Lines(', 'a query option such as $filter or $select expected, found end of input at position 6'],
  ['Lines()', "a query option such as $filter or $select expected, found ')' at position 6"],
  ['Lines($filter=Quantity gt 1', "an operator or ';' or ')' expected, found end of input at position 27"],
  ['Lines($filter Quantity gt 1)', "'=' after $filter expected, found 'Quantity' at position 14"],
  ['Lines($filtr=Quantity gt 1)', "unknown expand option '$filtr'; did you mean '$filter'? at position 6"],
  ['Lines($top=5;$top=6)', '$top is given twice at position 13'],
  ['Lines($top=5;top=6)', 'top is given twice at position 13'],
  ['Lines($top=-1)', "a non-negative integer for $top expected, found '-1' at position 11"],
  ['Lines($top=1.5)', "a non-negative integer for $top expected, found '1.5'"],
  ["Lines($top='5')", "a non-negative integer for $top expected, found ''5''"],
  ['Lines($count=yes)', "true or false for $count expected, found 'yes' at position 13"],
  ['Manager($levels=0)', '$levels must be at least 1 (or max) at position 16'],
  ['Manager($levels=many)', "a non-negative integer for $levels (or max) expected, found 'many'"],
  ['Lines/$ref($select=Guid)', '$select is not allowed with /$ref at position 11'],
  ['Lines/$count($top=1)', '$top is not allowed with /$count at position 13'],
  ['*($filter=a eq 1)', '$filter is not allowed after * at position 2'],
  ['*/Lines', "'$ref' after '*/' expected, found 'Lines' at position 2"],
  ['$ref', "'$ref' is not allowed here at position 0"],
  ['Lines/$value', "'$value' is not allowed here at position 6"],
  ['Lines/$count/Product', "',' or end of input expected, found '/' at position 12"],
  ['Lines/$ref/Product', "',' or end of input expected, found '/' at position 10"],
  ['Lines;Customer', "',' or end of input expected, found ';' at position 5"],
  ['Lines($filter=Quantity gt 1))', "',' or end of input expected, found ')' at position 28"],
  ['Lines($orderby=Quantity descc)', "unknown operator 'descc'; did you mean 'desc'?"],
]

describe('$select and $expand reject malformed items', () => {
  it.each(MALFORMED_SELECT)('rejects $select=%s', (input, message) => {
    const error = errorOf(() => parseSelect(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.target).toBe('$select')
    expect(error.message).toContain(message)
  })

  it.each(MALFORMED_EXPAND)('rejects $expand=%s', (input, message) => {
    const error = errorOf(() => parseExpand(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.target).toBe('$expand')
    expect(error.message).toContain(message)
    expect(error.message).toContain(`in '${input}'`)
  })

  it.each([
    ['Lines(@p=1)', 'a parameter alias inside $expand'],
    ['$value', '$expand=$value'],
  ])('answers $expand=%s with 501 NotImplemented', (input, what) => {
    const error = errorOf(() => parseExpand(input))
    expect(error.code).toBe('NotImplemented')
    expect(error.message).toContain(`${what} is not supported`)
  })

  it('answers options nested in $select with 501 NotImplemented', () => {
    expect(errorOf(() => parseSelect('Tags($top=2)')).code).toBe('NotImplemented')
  })

  it('rejects runaway $expand nesting with QueryLimitExceeded', () => {
    const text = `${'A($expand='.repeat(120)}B${')'.repeat(120)}`
    expect(errorOf(() => parseExpand(text)).code).toBe('QueryLimitExceeded')
  })
})
