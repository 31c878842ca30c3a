// Specification 4.3 rule 7: read methods must not modify data. A read method runs in a
// read-only transaction that is rolled back: its writes fail and nothing is saved.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins', import.meta.url)) })
  token = await server.token()
  for (const Amount of [1, 2, 3]) await call(`${server.api}/Entries`, { method: 'POST', token, body: { Amount } })
})
afterAll(async () => server?.stop())

const amounts = async () =>
  (await call(`${server.api}/Entries?$select=Amount&$orderby=Amount`, { token })).body.value.map((e: { Amount: number }) => e.Amount)

it('refuses the write of a read method and saves nothing', async () => {
  const response = await call(`${server.api}/Entries/SneakyTotal()`, { token })
  expect(response.status).toBe(403)
  expect(response.body.error.message).toContain('A read method cannot change data')
  expect(await amounts()).toEqual([1, 2, 3])
})

it('lets a modify method write through the rules, atomically', async () => {
  const response = await call(`${server.api}/Entries/Double`, { method: 'POST', token })
  expect(response.status).toBe(200)
  expect(response.body.value).toBe(3)
  expect(await amounts()).toEqual([2, 4, 6])
})

it("computes a computed value again when a modify method sets it: the value is the rules' alone", async () => {
  expect((await call(`${server.api}/Entries/Retitle`, { method: 'POST', token })).status).toBe(204)
  const titles = (await call(`${server.api}/Entries?$select=Title&$orderby=Amount`, { token })).body.value.map((e: { Title: string }) => e.Title)
  expect(titles).toEqual(['Entry of 2', 'Entry of 4', 'Entry of 6'])
})
