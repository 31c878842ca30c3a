// Literals and tokens of the common expression grammar, read through parseFilter (a lone
// literal is a complete expression) so the cases show what the binder receives.
import { describe, expect, it } from 'vitest'
import { parseFilter } from '../../../server/odata/parser/filter-parser.ts'
import { Lexer } from '../../../server/odata/parser/lexer.ts'
import type { LiteralSyntax } from '../../../server/odata/parser/syntax.ts'
import { errorOf, show } from './notation.ts'

const LITERALS: [string, string][] = [
  ["'x'", "'x'"],
  ["''", "''"],
  ["'O''Neil'", "'O''Neil'"],
  ["'a b  c'", "'a b  c'"],
  ["'100%'", "'100%'"],
  ["'&=;/()'", "'&=;/()'"],
  ["'Zürich'", "'Zürich'"],
  ["'P1D'", "'P1D'"],
  ["'Red'", "'Red'"],
  ['42', '42'],
  ['0', '0'],
  ['-7', '-7'],
  ['+7', '7'],
  ['2147483648', '2147483648'],
  ['9223372036854775807', '9223372036854775807'],
  ['99999999999999999999', 'decimal:99999999999999999999'],
  ['1.5', 'decimal:1.5'],
  ['-0.25', 'decimal:-0.25'],
  ['+2.50', 'decimal:2.50'],
  ['1.5e3', 'double:1500'],
  ['2E-2', 'double:0.02'],
  ['1e+10', 'double:10000000000'],
  ['-1.5e-3', 'double:-0.0015'],
  ['INF', 'double:Infinity'],
  ['-INF', 'double:-Infinity'],
  ['NaN', 'double:NaN'],
  ['true', 'true'],
  ['false', 'false'],
  ['TRUE', 'true'],
  ['False', 'false'],
  ['null', 'null'],
  ['01234567-89ab-cdef-0123-456789abcdef', 'guid:01234567-89ab-cdef-0123-456789abcdef'],
  ['DEADBEEF-0000-1111-2222-333344445555', 'guid:deadbeef-0000-1111-2222-333344445555'],
  ['2024-01-31', 'date:2024-01-31'],
  ['2024-02-29', 'date:2024-02-29'],
  ['2000-02-29', 'date:2000-02-29'],
  ['2024-01-31T10:00:00Z', 'dateTimeOffset:2024-01-31T10:00:00Z'],
  ['2024-01-31T10:00Z', 'dateTimeOffset:2024-01-31T10:00Z'],
  ['2024-01-31T10:00:00.1234567+02:00', 'dateTimeOffset:2024-01-31T10:00:00.1234567+02:00'],
  ['2024-01-31T23:59:59-05:30', 'dateTimeOffset:2024-01-31T23:59:59-05:30'],
  ['2024-01-31t10:00:00z', 'dateTimeOffset:2024-01-31t10:00:00z'],
  ['10:00:00.5', 'timeOfDay:10:00:00.5'],
  ['23:59', 'timeOfDay:23:59'],
  ['00:00:00', 'timeOfDay:00:00:00'],
  ["duration'P1DT2H'", 'duration:P1DT2H'],
  ["duration'-PT30M'", 'duration:-PT30M'],
  ["duration'PT1.5S'", 'duration:PT1.5S'],
  ["duration'P12DT23H59M59.999999999999S'", 'duration:P12DT23H59M59.999999999999S'],
  ["DURATION'P1D'", 'duration:P1D'],
  ["binary'AAE='", 'binary:AAE='],
  ["binary'T0RhdGE'", 'binary:T0RhdGE'],
  ["Sales.Color'Red'", "enum:Sales.Color'Red'"],
  ["Sales.Color'Red,Blue'", "enum:Sales.Color'Red,Blue'"],
  ["My.Name.Space.Flags'5'", "enum:My.Name.Space.Flags'5'"],
  ['@p', '@p'],
  ['@Alias_2', '@Alias_2'],
]

describe('literals', () => {
  it.each(LITERALS)('reads %s as %s', (input, expected) => {
    expect(show(parseFilter(input))).toBe(expected)
  })

  it('unescapes doubled quotes in the value and keeps the text as written', () => {
    const literal = parseFilter("'O''Neil'") as LiteralSyntax
    expect(literal).toMatchObject({ type: 'string', value: "O'Neil", text: "'O''Neil'", position: 0 })
  })

  it('keeps integers beyond 2^53 exact as bigint', () => {
    expect((parseFilter('9223372036854775807') as LiteralSyntax).value).toBe(9223372036854775807n)
    expect((parseFilter('-9007199254740993') as LiteralSyntax).value).toBe(-9007199254740993n)
  })

  it('keeps decimals as their digits, so no precision is lost', () => {
    expect((parseFilter('0.1000000000000000055511151231257827') as LiteralSyntax).value).toBe(
      '0.1000000000000000055511151231257827',
    )
  })

  it('reads a qualified enum literal with its type apart', () => {
    expect(parseFilter("Sales.Color'Red'")).toMatchObject({ type: 'enum', enumType: 'Sales.Color', value: 'Red' })
  })

  it('reads a name glued to a quote as a name and a string (Name eq\'x\')', () => {
    expect(show(parseFilter("Name eq'x'"))).toBe("(eq Name 'x')")
  })
})

const MALFORMED: [string, RegExp][] = [
  ["'abc", /unterminated string literal: closing quote expected at position 0/],
  ["Name eq 'it''s", /unterminated string literal.* at position 8/],
  ['2024-13-01', /invalid date '2024-13-01': no such day at position 0/],
  ['2023-02-29', /invalid date '2023-02-29': no such day/],
  ['2024-04-31', /no such day/],
  ['2024-1-01', /invalid date '2024-1-01' \(expected YYYY-MM-DD\)/],
  ['2024-01-31T25:00:00Z', /invalid time '25:00' at position 11/],
  ['2024-01-31T10:00:00', /time zone expected in date-time offset .*a '\+' must not be sent as a space/],
  ['2024-01-31T10:00:00 02:00', /time zone expected/],
  ['2024-01-31T10:00:00+2:00', /invalid time zone offset/],
  ['2024-01-31T10', /invalid time \(expected hh:mm or hh:mm:ss\)/],
  ['10:60', /invalid time '10:60'/],
  ['10:00:61', /invalid seconds/],
  ['10:00:00.', /invalid fractional seconds/],
  ['1.', /invalid number '1.': digits expected after '.'/],
  ['1e', /invalid number '1e': exponent digits expected/],
  ['12abc', /invalid number '12a'/],
  ['1.5M', /invalid number/],
  ["duration'P'", /invalid duration 'P'/],
  ["duration'1D'", /invalid duration '1D'/],
  ["duration'PT'", /invalid duration 'PT'/],
  ["duration'P1H'", /invalid duration 'P1H'/],
  ["binary'A'", /invalid binary literal 'A'/],
  ["binary'a+b='", /invalid binary literal/],
  ["Sales.Color''", /invalid enumeration value ''/],
  ["Sales.Color'Red,,Blue'", /invalid enumeration value 'Red,,Blue'/],
  ['#', /unexpected character '#' at position 0/],
  ['Name eq "x"', /unexpected '"' \(string literals are enclosed in single quotes: 'text'\) at position 8/],
  ['@', /a parameter alias name expected after '@'/],
  ['$', /unexpected '\$'/],
]

describe('malformed literals', () => {
  it.each(MALFORMED)('rejects %s with InvalidQuery naming the problem', (input, message) => {
    const error = errorOf(() => parseFilter(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.status).toBe(400)
    expect(error.message).toMatch(message)
    expect(error.message).toContain(`in '${input}'`)
  })

  it('reads + before a digit as a sign, so an unencoded plus works in numbers', () => {
    expect(show(parseFilter('Total gt+5'))).toBe('(gt Total 5)')
  })

  it('rejects a form-encoded space (+) with a hint to use %20', () => {
    const error = errorOf(() => parseFilter("Name+eq+'x'"))
    expect(error.code).toBe('InvalidQuery')
    expect(error.message).toBe(
      "Invalid $filter: unexpected '+' (in a URL '+' is a plus sign, not a space: encode spaces as %20) at position 4 in 'Name+eq+'x''.",
    )
  })

  it.each([
    ["geography'SRID=0;Point(1 2)'", "the geography literal"],
    ['[1,2]', 'a JSON array or object literal'],
    ['@Core.Messages', 'an annotation in an expression'],
  ])('answers %s with 501 NotImplemented', (input, what) => {
    const error = errorOf(() => parseFilter(input))
    expect(error.code).toBe('NotImplemented')
    expect(error.message).toContain(`${what} is not supported at position 0`)
  })
})

describe('Lexer', () => {
  function tokens(text: string): string[] {
    const lexer = new Lexer(text, '$filter')
    const out: string[] = []
    while (lexer.kind !== 'end') {
      out.push(lexer.kind === 'identifier' || lexer.kind === 'alias' ? lexer.name : lexer.kind === 'literal' ? `#${lexer.literal?.text}` : lexer.kind)
      lexer.next()
    }
    return out
  }

  it('splits punctuation, names, $-names, aliases and literals', () => {
    expect(tokens("Lines/any(l:l/Qty gt 8) and $it/Name eq @p;*=x,-y")).toEqual([
      'Lines', '/', 'any', '(', 'l', ':', 'l', '/', 'Qty', 'gt', '#8', ')', 'and', '$it', '/', 'Name', 'eq', '@p', ';', '*', '=', 'x', ',', '-', 'y',
    ])
  })

  it('reads dotted names as one token, and Namespace.* too', () => {
    expect(tokens('Sales.VipCustomer/Rank Sales.*')).toEqual(['Sales.VipCustomer', '/', 'Rank', 'Sales.*'])
  })

  it('records token start and end offsets', () => {
    const lexer = new Lexer("  Name   eq 'x'", '$filter')
    expect([lexer.start, lexer.end]).toEqual([2, 6])
    lexer.next()
    expect([lexer.start, lexer.end, lexer.lower]).toEqual([9, 11, 'eq'])
    lexer.next()
    expect([lexer.start, lexer.end]).toEqual([12, 15])
  })

  it('reads a GUID that starts with letters before trying a name', () => {
    expect(tokens('abcdef01-2345-6789-abcd-ef0123456789 eq abcdef01')).toEqual([
      '#abcdef01-2345-6789-abcd-ef0123456789', 'eq', 'abcdef01',
    ])
  })
})
