// $search text → syntax, a table of cases in a compact notation, and where a search ends
// inside $expand and $apply.

import { describe, expect, it } from 'vitest'
import { parseSearch } from '../../../server/odata/parser/search-parser.ts'
import { parseQueryOptions } from '../../../server/odata/parser/query-options-parser.ts'
import { parseExpand } from '../../../server/odata/parser/select-expand-parser.ts'
import { parseApply } from '../../../server/odata/parser/apply-parser.ts'
import type { SearchSyntax } from '../../../server/odata/parser/syntax.ts'
import { ServiceError } from '../../../server/errors.ts'

/** blue → blue, "a b" → "a b", NOT x → (not x), x AND y → (and x y). */
function notation(search: SearchSyntax): string {
  switch (search.kind) {
    case 'searchTerm':
      return search.phrase ? JSON.stringify(search.text) : search.text
    case 'searchNot':
      return `(not ${notation(search.operand)})`
    case 'searchBinary':
      return `(${search.op} ${notation(search.left)} ${notation(search.right)})`
  }
}

describe('parseSearch', () => {
  it.each([
    ['blue', 'blue'],
    ['blue green', '(and blue green)'],
    ['blue AND green', '(and blue green)'],
    ['blue OR green', '(or blue green)'],
    ['blue OR green red', '(or blue (and green red))'],
    ['blue green OR red', '(or (and blue green) red)'],
    ['NOT blue green', '(and (not blue) green)'],
    ['NOT (blue OR green)', '(not (or blue green))'],
    ['"light green" OR red', '(or "light green" red)'],
    ['"say \\"hi\\" \\\\ bye"', '"say \\"hi\\" \\\\ bye"'],
    ['and or not', '(and (and and or) not)'],
    ['  ( blue )  ', 'blue'],
    ['light-green café', '(and light-green café)'],
  ])('%s → %s', (text, expected) => {
    expect(notation(parseSearch(text))).toBe(expected)
  })

  it.each([
    ['', 'a word'],
    ['blue OR', 'a word'],
    ['(blue', "')' expected"],
    ['blue)', 'AND, OR or end of input expected'],
    ['"blue', 'no closing'],
    ['""', 'empty phrase'],
    ['"a \\x"', 'escapes only'],
    [`${'('.repeat(150)}x${')'.repeat(150)}`, 'nested deeper'],
  ])('refuses %j', (text, message) => {
    let error: unknown
    try {
      parseSearch(text)
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).message).toContain(message)
  })
})

describe('$search in the options that hold it', () => {
  it('reads the top-level option, percent-decoded', () => {
    expect(notation(parseQueryOptions('$search=%22light%20green%22%20OR%20red').search!)).toBe('(or "light green" red)')
  })

  it('ends at the next expand option or the closing parenthesis, whatever the phrase holds', () => {
    const [item] = parseExpand('Books($search="a;b)" OR (c d);$top=2),Author')
    expect(item.kind === 'expandPath' && notation(item.options.search!)).toBe('(or "a;b)" (and c d))')
    expect(item.kind === 'expandPath' && item.options.top).toBe(2)
  })

  it('is a transformation of $apply', () => {
    const [search, aggregate] = parseApply('search(blue OR "x)y")/aggregate($count as N)')
    expect(search.kind === 'search' && notation(search.search)).toBe('(or blue "x)y")')
    expect(aggregate.kind).toBe('aggregate')
  })
})
