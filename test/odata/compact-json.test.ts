// Every JSON answer is compact, whoever builds it: PostgreSQL (entities, pages, expands,
// $apply), Node (errors, $metadata, the service document, virtual properties) or the write
// path. "Compact" is checked on the bytes: valid JSON with no whitespace outside its strings.
// (JSON.stringify(JSON.parse(body)) === body would also rewrite decimals such as 9.00.)

import { afterAll, beforeAll, expect, it } from 'vitest'
import { call } from '../support/test-server.ts'
import { startQueryServer, url, type QueryServer } from './query/query-server.ts'

let q: QueryServer

beforeAll(async () => {
  q = await startQueryServer()
}, 120_000)

afterAll(async () => {
  await q?.stop()
})

/** The offset of the first whitespace outside a string, or -1 when there is none. */
function spaceOutsideStrings(text: string): number {
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === ' ' || c === '\n' || c === '\r' || c === '\t') return i
  }
  return -1
}

function expectCompact(path: string, answer: { status: number; text: string; headers: Headers }, status: number): void {
  expect(answer.status, `${path}: ${answer.text.slice(0, 300)}`).toBe(status)
  expect(answer.headers.get('content-type'), path).toMatch(/^application\/json/)
  expect(() => JSON.parse(answer.text), path).not.toThrow()
  const at = spaceOutsideStrings(answer.text)
  expect(at, `${path}: whitespace at ${at}: …${answer.text.slice(Math.max(0, at - 40), at + 40)}…`).toBe(-1)
}

it('answers reads of every shape with compact JSON', async () => {
  const [ada] = q.data.employees
  const order = q.data.orders[0]
  const reads: [string, Record<string, string>?][] = [
    [''],
    [url('$metadata', { $format: 'json' })],
    [`Employees(${ada.Guid})`],
    [url(`Employees(${ada.Guid})`, { $select: 'Name,Salary,LastLogin,StartTime,HireDate,Rating,Active', $expand: 'Manager,Department' })],
    [url(`Orders(${order.Guid})`, { $expand: 'Lines', $select: 'Total' })],
    [url('Employees', { $top: 4 })],
    [url('Employees', { $select: 'Name', $expand: 'Manager($select=Name),Reports($select=Name;$top=2;$count=true;$expand=Flights($select=Guid))', $count: true, $top: 5 })],
    [url('Employees', { $filter: "Name eq 'nobody'", $count: true })],
    [url('Employees', { $select: 'DisplayName,Name', $top: 3 })],
    [url('Employees', { $select: 'Name', $orderby: 'Name' }), { Prefer: 'odata.maxpagesize=2' }],
    [url('Orders', { $apply: 'groupby((Customer/Name),aggregate(Total with sum as Revenue))' })],
    [url('Orders', { $apply: 'aggregate($count as N,Total with average as Mean)', $count: true })],
    [url('Employees', { $apply: 'groupby((Level,Department/Name))', $orderby: 'Level' })],
  ]
  for (const [path, headers] of reads) expectCompact(path, await q.get(path, headers), 200)
})

it('answers errors and writes with compact JSON', async () => {
  const errors = [url('Employees', { $filter: 'Name eq' }), 'Employees(00000000-0000-4000-8000-000000000000)', 'Nothing', url('Employees', { $select: 'Nope' })]
  for (const path of errors) {
    const answer = await q.get(path)
    expect(answer.status, path).toBeGreaterThanOrEqual(400)
    expectCompact(path, answer, answer.status)
  }
  const api = q.server.api
  const created = await call(`${api}/${url('Departments', { $select: 'Name,Budget', $expand: 'Employees' })}`, { method: 'POST', token: q.token, body: { Code: 'CMP', Name: 'Compact "quoted" name', Budget: 12.5 } })
  expectCompact('POST Departments', created, 200)
  expect(created.text).toContain('"Name":"Compact \\"quoted\\" name","Budget":12.50,"Employees":[]')
  const patched = await call(`${api}/Departments(${created.body.Guid})?$select=Budget`, {
    method: 'PATCH',
    token: q.token,
    headers: { Prefer: 'return=representation' },
    body: { Budget: 9 },
  })
  expectCompact('PATCH Departments', patched, 200)
  expect(patched.text).toContain('"Budget":9.00')
})
