// Judges answers against the workload (WORKLOAD.md §3): the expected counts decide whether an
// operation may be load-tested; the expected content is compared too, but a difference is only
// reported. Only what the query selected is compared (keys and annotations the expected result
// does not name are ignored), numbers numerically ("12.30" equals 12.3), Q5's rows in any order.
import type { ReadExpectation, ReadOperation } from './workload.ts'
import type { HttpAnswer } from './http-request.ts'

export type Check = {
  /** Status and expected counts: false means "failed, not load-tested". */
  ok: boolean
  /** Expected content; null when the counts already failed. */
  contentOk: boolean | null
  problems: string[]
}

const MAX_PROBLEMS = 5

export function checkReadAnswer(operation: ReadOperation, answer: HttpAnswer): Check {
  const body = parseBody(answer)
  if (answer.status !== 200 || body === undefined) {
    return { ok: false, contentOk: null, problems: [`status ${answer.status}: ${answer.text.slice(0, 300)}`] }
  }
  const countProblems = checkCounts(operation.expect, body)
  if (countProblems.length > 0) return { ok: false, contentOk: null, problems: countProblems }
  const expected = operation.unorderedBy ? sortRows(operation.expected, operation.unorderedBy) : operation.expected
  const actual = operation.unorderedBy ? sortRows(body, operation.unorderedBy) : body
  const problems: string[] = []
  compare(expected, actual, '', problems)
  return { ok: true, contentOk: problems.length === 0, problems }
}

/** W1 and W2: a 2xx answer, then the order's Total as the business rules must have left it. */
export function checkTotal(answer: HttpAnswer, expectedTotal: number, what: string): string[] {
  const body = parseBody(answer) as { Total?: unknown } | undefined
  if (answer.status < 200 || answer.status > 299) return [`${what}: status ${answer.status}: ${answer.text.slice(0, 300)}`]
  if (!sameNumber(expectedTotal, body?.Total)) return [`${what}: Total ${JSON.stringify(body?.Total)}, expected ${expectedTotal}`]
  return []
}

export function checkStatus(answer: HttpAnswer, what: string): string[] {
  return answer.status >= 200 && answer.status <= 299 ? [] : [`${what}: status ${answer.status}: ${answer.text.slice(0, 300)}`]
}

function parseBody(answer: HttpAnswer): unknown {
  try {
    return JSON.parse(answer.text)
  } catch {
    return undefined
  }
}

type Json = Record<string, unknown>
const rowsOf = (body: unknown): Json[] | undefined => {
  const value = (body as Json | null)?.value
  return Array.isArray(value) ? (value as Json[]) : undefined
}
const many = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : [])

function checkCounts(expect: ReadExpectation, body: unknown): string[] {
  const problems: string[] = []
  const rows = rowsOf(body)
  if (expect.entity) {
    if (rows !== undefined || typeof body !== 'object' || body === null) problems.push('expected a single entity')
    return problems
  }
  if (rows === undefined) return ['expected a "value" array']
  if (expect.rows !== undefined && rows.length !== expect.rows) problems.push(`${rows.length} rows, expected ${expect.rows}`)
  if (expect.count !== undefined && !sameNumber(expect.count, (body as Json)['@odata.count'])) {
    problems.push(`@odata.count ${JSON.stringify((body as Json)['@odata.count'])}, expected ${expect.count}`)
  }
  const orders = rows.flatMap((row) => many(row.Orders))
  if (expect.nestedOrders !== undefined && orders.length !== expect.nestedOrders) {
    problems.push(`${orders.length} expanded orders, expected ${expect.nestedOrders}`)
  }
  const lines = orders.flatMap((order) => many(order.Lines))
  if (expect.nestedLines !== undefined && lines.length !== expect.nestedLines) {
    problems.push(`${lines.length} expanded lines, expected ${expect.nestedLines}`)
  }
  return problems
}

function compare(expected: unknown, actual: unknown, path: string, problems: string[]): void {
  if (problems.length >= MAX_PROBLEMS) return
  const at = path || '(body)'
  if (typeof expected === 'number') {
    if (!sameNumber(expected, actual)) problems.push(`${at}: ${JSON.stringify(actual)}, expected ${expected}`)
  } else if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      problems.push(`${at}: ${Array.isArray(actual) ? actual.length : typeof actual} items, expected ${expected.length}`)
      return
    }
    expected.forEach((item, i) => compare(item, actual[i], `${path}[${i}]`, problems))
  } else if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') {
      problems.push(`${at}: ${JSON.stringify(actual)}, expected an object`)
      return
    }
    for (const [key, value] of Object.entries(expected)) {
      compare(value, (actual as Json)[key], path ? `${path}.${key}` : key, problems)
    }
  } else if (expected !== actual) {
    problems.push(`${at}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
  }
}

function sameNumber(expected: number, actual: unknown): boolean {
  if (typeof actual !== 'number' && typeof actual !== 'string') return false
  const value = typeof actual === 'string' && actual.trim() === '' ? NaN : Number(actual)
  return Math.abs(value - expected) <= 1e-9 * Math.max(1, Math.abs(expected))
}

/** Sorts `body.value` by the value at `path` (`Customer/Country`), leaving the body otherwise as is. */
function sortRows(body: unknown, path: string): unknown {
  const rows = rowsOf(body)
  if (!rows) return body
  const keyOf = (row: unknown) =>
    String(path.split('/').reduce<unknown>((value, step) => (value as Json | null)?.[step], row))
  const sorted = [...rows].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0))
  return { ...(body as Json), value: sorted }
}
