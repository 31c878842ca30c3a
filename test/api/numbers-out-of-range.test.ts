// A JSON number beyond what a double holds (1e400) reads as Infinity: the write refuses it,
// naming the property and what the client sent, never "not null" and never an infinite
// value stored (and answered as "Infinity", which is no OData JSON number).

import { afterAll, beforeAll, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { FIXTURE_PLUGINS } from '../odata/query/query-server.ts'

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: FIXTURE_PLUGINS })
  token = await server.token()
})
afterAll(async () => server?.stop())

it.each([
  ['Rating', 'Edm.Double'],
  ['Salary', 'Edm.Decimal'],
  ['Age', 'Edm.Int32'],
])('refuses %s: 1e400 (%s) as out of range, and stores nothing', async (property) => {
  const body = `{"Name":"Out of range","Active":true,"${property}":1e400}`
  const answer = await call(`${server.api}/Employees`, { method: 'POST', token, body })
  expect(answer.status).toBe(400)
  expect(answer.body.error.details).toEqual([
    { code: 'ValidationFailed', target: property, message: expect.stringMatching(new RegExp(`^${property} expects .*, not a number out of range \\(beyond ±1\\.8e308\\)\\.$`)) },
  ])
  const stored = await call(`${server.api}/Employees/$count?$filter=Name eq 'Out of range'`.replaceAll(' ', '%20'), { token })
  expect(stored.text).toBe('0')
})
