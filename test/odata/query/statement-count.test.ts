// A read is one SQL statement, however many rows and expanded levels it returns: no N+1.
// The server runs in this process, so the test counts the statements that reach the tenant
// database (support/statement-recorder.ts), and runs each read twice: a first time to warm
// the caches of authentication, then the time that is counted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { data } from './cases.ts'
import { startQueryServer, url, type QueryServer } from './query-server.ts'
import { recordStatements, type StatementRecorder } from '../../support/statement-recorder.ts'

let server: QueryServer
let database = ''
let recorder: StatementRecorder

beforeAll(async () => {
  server = await startQueryServer()
  database = new URL(server.databaseUrl).pathname.slice(1)
  recorder = recordStatements(() => database)
})

afterAll(async () => {
  recorder?.restore()
  await server?.stop()
})

/** The statements one request sends to the tenant database, with warm caches. */
async function statementsOf(path: string): Promise<{ statements: string[]; body: any }> {
  const warm = await server.get(path)
  expect(warm.status, warm.text).toBe(200)
  const { result: response, statements } = await recorder.during(() => server.get(path))
  expect(response.status, response.text).toBe(200)
  return { statements, body: response.body ?? response.text }
}

const { employees: E, customers: C, orders: O } = data

const DEEP_EMPLOYEES = 'Reports($select=Name;$filter=Active;$orderby=Age desc;$top=2;$count=true;$expand=Reports($select=Name;$expand=Flights($select=Number))),Manager($select=Name;$expand=Department($select=Code),Manager($select=Name)),Mentor,Flights($expand=From($select=Code),To($select=Code),Pilot($select=Name)),Department($expand=Employees($select=Name;$top=3))'

describe('one statement per read', () => {
  it.each([
    ['one row', url('Employees', { $top: 1, $expand: DEEP_EMPLOYEES })],
    ['every row', url('Employees', { $count: true, $expand: DEEP_EMPLOYEES })],
    ['filtered and sorted through references', url('Employees', { $filter: "Manager/Manager/Name eq 'Ada Lovelace' or Reports/any(r:r/Flights/$count gt 1)", $orderby: 'Department/Name,Manager/Name desc', $expand: DEEP_EMPLOYEES })],
    ['$levels on a self-reference', url('Employees', { $expand: 'Manager($levels=max;$select=Name),Reports($levels=3;$select=Name)' })],
    ['the demo: customers, orders, lines, products', url('Customers', { $select: 'Name', $expand: 'Orders($select=Number;$orderby=Number;$expand=Lines($select=Quantity;$expand=Product($select=Code),Order($select=Number)))' })],
    ['one entity with its expands', url(`Employees(${E[0].Guid})`, { $select: 'Name,DisplayName', $expand: DEEP_EMPLOYEES })],
    ['a navigation from one entity', url(`Customers(${C[0].Guid})/Orders`, { $expand: 'Lines($expand=Product)', $count: true })],
    ['/$count', url('Orders/$count', { $filter: 'Lines/any(l:l/Product/Price gt 10)' })],
    ['$apply', url('Orders', { $apply: 'filter(Total gt 0)/groupby((Customer/Country),aggregate(Total with sum as Revenue,$count as N))', $orderby: 'Revenue desc', $count: true })],
  ])('%s', async (_, path) => {
    const { statements } = await statementsOf(path)
    expect(statements).toHaveLength(1)
    // One read statement (a select, or a with for the filtered relation a count reads too), no begin.
    expect(statements[0]).toMatch(/^(select|with) /)
  })

  it('does not grow with the number of rows or of expanded entities', async () => {
    const expand = 'Lines($expand=Product;$count=true),Customer($expand=Orders($select=Number))'
    const few = await statementsOf(url('Orders', { $top: 1, $expand: expand }))
    const all = await statementsOf(url('Orders', { $expand: expand }))
    expect(few.body.value).toHaveLength(1)
    expect(all.body.value).toHaveLength(O.length)
    const expanded = all.body.value.reduce((n: number, o: { Lines: unknown[]; Customer: { Orders: unknown[] } }) => n + o.Lines.length + o.Customer.Orders.length, 0)
    expect(expanded).toBeGreaterThan(100)
    expect(few.statements).toHaveLength(1)
    expect(all.statements).toHaveLength(1)
  })

  it('pages by the server in the same one statement', async () => {
    const { statements, body } = await statementsOf(url('Employees', { $expand: 'Reports' }))
    expect(body.value).toHaveLength(E.length)
    expect(statements).toHaveLength(1)
  })
})
