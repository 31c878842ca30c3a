import { describe, expect, it } from 'vitest'
import { parseOrderby } from '../../../server/odata/parser/orderby-parser.ts'
import { errorOf, showOrderby } from './notation.ts'

const VALID: [string, string][] = [
  ['Name', 'Name asc'],
  ['Name asc', 'Name asc'],
  ['Name desc', 'Name desc'],
  ['Name DESC', 'Name desc'],
  ['Name Asc', 'Name asc'],
  ['Customer/Name desc,Total', 'Customer/Name desc, Total asc'],
  ['Customer/Name desc, Total asc, Guid', 'Customer/Name desc, Total asc, Guid asc'],
  ['Price mul Quantity desc', '(mul Price Quantity) desc'],
  ['tolower(Name)', 'tolower(Name) asc'],
  ['Lines/$count desc', 'Lines/$count desc'],
  ["Name eq 'x' desc", "(eq Name 'x') desc"],
  ['$it/Total', '$it/Total asc'],
  ['(Total)', 'Total asc'],
]

const MALFORMED: [string, string][] = [
  ['', 'an expression expected, found end of input at position 0'],
  ['Name descending', "an operator or asc, desc, ',' or the end of $orderby expected, found 'descending' at position 5"],
  ['Name dsc', "unknown operator 'dsc'; did you mean 'desc'? at position 5"],
  ['Name asc desc', "an operator or asc, desc, ',' or the end of $orderby expected, found 'desc' at position 9"],
  ['Name,', 'an expression expected, found end of input at position 5'],
  [',Name', "an expression expected, found ',' at position 0"],
  ['Name desc;Total', "',' or end of input expected, found ';' at position 9"],
  ['Name Total', "found 'Total' at position 5"],
]

describe('parseOrderby', () => {
  it.each(VALID)('parses %s', (input, expected) => {
    expect(showOrderby(parseOrderby(input))).toBe(expected)
  })

  it('keeps each item position', () => {
    expect(parseOrderby('Name, Total desc').map((item) => item.position)).toEqual([0, 6])
  })

  it.each(MALFORMED)('rejects %s', (input, message) => {
    const error = errorOf(() => parseOrderby(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.target).toBe('$orderby')
    expect(error.message).toContain(message)
  })
})
