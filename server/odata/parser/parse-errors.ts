// The parser's failures, worded in one place. Syntax errors are 400 InvalidQuery and quote the
// option, the position and the text (odata.net: `')' expected at position 12 in '…'`); valid
// OData this service does not implement is 501 NotImplemented; the parser's own guards (nesting
// depth, text length) are 400 QueryLimitExceeded, as the other limits (decisions.md).

import { QueryError, ServiceError } from '../../errors.ts'

/**
 * Deepest nesting of parentheses, calls, lambdas, unary operators and $expand levels: it bounds
 * the parser's recursion. Chains (`a or b or …`) are not nesting; MaxNodeCount bounds them.
 */
export const MAX_DEPTH = 100

/** Longest resource path or query string the parser reads. */
export const MAX_TEXT_LENGTH = 32_768

// Quoting a whole 30 KB filter in an error body helps nobody: long texts are shown as a window
// around the position, which stays the offset in the full text.
const QUOTE_LIMIT = 200
const WINDOW = 60

function excerpt(text: string, position: number): string {
  if (text.length <= QUOTE_LIMIT) return text
  const from = Math.max(0, position - WINDOW)
  const to = Math.min(text.length, position + WINDOW)
  return `${from > 0 ? '…' : ''}${text.slice(from, to)}${to < text.length ? '…' : ''}`
}

/** `Invalid $filter: ')' expected, found end of input at position 11 in 'Name eq 'x''.` */
export function syntaxError(option: string, text: string, position: number, problem: string): ServiceError {
  return QueryError.syntax(option, excerpt(text, position), position, problem)
}

/** `$filter: the function 'geo.distance' is not supported at position 0 in '…'.` (501) */
export function unsupported(option: string, text: string, position: number, what: string): ServiceError {
  return new ServiceError(
    'NotImplemented',
    `${option}: ${what} is not supported at position ${position} in '${excerpt(text, position)}'.`,
    { target: option },
  )
}

export function tooDeep(option: string, text: string, position: number): ServiceError {
  return new ServiceError(
    'QueryLimitExceeded',
    `Invalid ${option}: nested deeper than ${MAX_DEPTH} levels (parentheses, calls, lambdas, unary operators; the parser's nesting limit) at position ${position} in '${excerpt(text, position)}'.`,
    { target: option },
  )
}

export function tooLong(what: string, length: number): ServiceError {
  return new ServiceError(
    'QueryLimitExceeded',
    `The ${what} is ${length} characters long; the parser reads at most ${MAX_TEXT_LENGTH} (its MaxLength).`,
    { target: what },
  )
}

/** An expression tree deeper than MAX_TREE_DEPTH (node-count.ts): long chains under a raised MaxNodeCount. */
export function treeTooDeep(depth: number, limit: number): ServiceError {
  return new ServiceError(
    'QueryLimitExceeded',
    `An expression of the query is ${depth} levels deep (each operator of a chain such as 'a or b or c' is one level); the service reads at most ${limit}.`,
    { target: 'query' },
  )
}
