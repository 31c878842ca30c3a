// Property-based: random valid $filter expressions over Employees (comparisons of every type
// with null, through references to any depth, and/or/not, any/all over Reports) must select
// exactly the rows the JavaScript evaluation of the same expression selects. Each generated
// filter is written twice, as OData text and as a predicate, so neither is derived from the
// other's parser.

import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Employee } from '../../fixtures/dataset.ts'
import { data } from './cases.ts'
import { startQueryServer, url, type QueryServer } from './query-server.ts'
import { eq, ge, gt, keysOf, le, lt, ne, sortRows } from './reference.ts'

type Value = string | number | boolean | null

interface Filter {
  readonly text: string
  readonly test: (employee: Employee) => boolean
}

interface PropertyShape {
  readonly name: string
  readonly get: (e: Employee) => Value
  readonly literal: (value: Value) => string
  /** Booleans compare with eq and ne only. */
  readonly ordered: boolean
}

const E = data.employees
const quote = (value: Value) => (value === null ? 'null' : `'${String(value).replaceAll("'", "''")}'`)
const plain = (value: Value) => (value === null ? 'null' : String(value))

const PROPERTIES: readonly PropertyShape[] = [
  { name: 'Name', get: (e) => e.Name, literal: quote, ordered: true },
  { name: 'Nickname', get: (e) => e.Nickname, literal: quote, ordered: true },
  { name: 'Age', get: (e) => e.Age, literal: plain, ordered: true },
  { name: 'Salary', get: (e) => e.Salary, literal: plain, ordered: true },
  { name: 'Rating', get: (e) => e.Rating, literal: plain, ordered: true },
  { name: 'HireDate', get: (e) => e.HireDate, literal: plain, ordered: true },
  { name: 'LastLogin', get: (e) => e.LastLogin, literal: plain, ordered: true },
  { name: 'StartTime', get: (e) => e.StartTime, literal: plain, ordered: true },
  { name: 'Active', get: (e) => e.Active, literal: plain, ordered: false },
]

// Paths through references: the evaluation follows the same links, a missing one gives null.
const PATHS: readonly { prefix: string; walk: (e: Employee) => Employee | null }[] = [
  { prefix: '', walk: (e) => e },
  { prefix: 'Manager/', walk: (e) => e.Manager },
  { prefix: 'Mentor/', walk: (e) => e.Mentor },
  { prefix: 'Manager/Manager/', walk: (e) => e.Manager?.Manager ?? null },
  { prefix: 'Mentor/Manager/', walk: (e) => e.Mentor?.Manager ?? null },
]

const OPERATORS = { eq, ne, gt, ge, lt, le } as const
type Operator = keyof typeof OPERATORS

/** A literal of the property: a value some employee has (so comparisons hit), or null. */
function literalOf(property: PropertyShape): fc.Arbitrary<Value> {
  const values = [...new Set(E.map(property.get))]
  return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: fc.constant(null) })
}

function comparison(prefix: string, walk: (e: Employee) => Employee | null): fc.Arbitrary<Filter> {
  return fc.constantFrom(...PROPERTIES).chain((property) =>
    fc.tuple(fc.constantFrom<Operator>(...(property.ordered ? (['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const) : (['eq', 'ne'] as const))), literalOf(property)).map(([op, value]) => {
      // An ordering comparison with null is valid OData, and false for every row.
      const read = (e: Employee) => {
        const target = walk(e)
        return target === null ? null : property.get(target)
      }
      return { text: `${prefix}${property.name} ${op} ${property.literal(value)}`, test: (e: Employee) => OPERATORS[op](read(e), value) }
    }),
  )
}

const atom: fc.Arbitrary<Filter> = fc.constantFrom(...PATHS).chain(({ prefix, walk }) => comparison(prefix, walk))

const lambda: fc.Arbitrary<Filter> = fc.tuple(fc.constantFrom('any', 'all'), comparison('r/', (e) => e)).map(([op, inner]) => ({
  text: `Reports/${op}(r:${inner.text})`,
  test: (e: Employee) => (op === 'any' ? e.Reports.some(inner.test) : e.Reports.every(inner.test)),
}))

const filter: fc.Arbitrary<Filter> = fc.letrec<{ node: Filter }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    lambda,
    fc.tuple(tie('node'), fc.constantFrom('and', 'or'), tie('node')).map(([a, op, b]) => ({
      text: `(${a.text}) ${op} (${b.text})`,
      test: (e: Employee) => (op === 'and' ? a.test(e) && b.test(e) : a.test(e) || b.test(e)),
    })),
    tie('node').map((a) => ({ text: `not (${a.text})`, test: (e: Employee) => !a.test(e) })),
  ),
})).node

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer()
})
afterAll(async () => {
  await server?.stop()
})

describe('random filters', () => {
  it('select the rows the JavaScript evaluation selects', async () => {
    await fc.assert(
      fc.asyncProperty(filter, async ({ text, test }) => {
        const response = await server.get(url('Employees', { $filter: text }))
        expect(response.status, `${text}: ${response.text}`).toBe(200)
        const got = response.body.value.map((row: { Guid: string }) => ({ Guid: row.Guid }))
        expect(got, text).toEqual(keysOf(sortRows(E.filter(test))))
      }),
      { numRuns: 150, seed: 20240531 },
    )
  })
})
