// A workflow lives in the tenant database, not in a server: a second instance on the same
// databases continues it, and a restart in the middle of one loses nothing.

import { afterAll, beforeAll, expect, it } from 'vitest'
import pino from 'pino'
import { startServer, type RunningServer } from '../../server/start.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { saveSalesData, WorkflowClient } from './helpers.ts'

let a: TestServer
let b: RunningServer
let restarted: RunningServer | undefined
let token: string

const startAnother = (configPath: string) => startServer({ configPath, port: 0, logger: pino({ level: 'silent' }) })

beforeAll(async () => {
  a = await startTestServer()
  b = await startAnother(a.configPath)
  token = await a.token()
})
afterAll(async () => {
  await restarted?.stop()
  await b?.stop()
  await a?.stop()
})

/** The same workflow, sent to another server. */
function on(url: string, workflow: WorkflowClient): WorkflowClient {
  const moved = new WorkflowClient(`${url}/api`, workflow.token, workflow.id)
  moved.index = workflow.index
  return moved
}

it('is continued, retried and committed on a second instance', async () => {
  const data = await saveSalesData(a.api, token, 10)
  const onA = await WorkflowClient.start(a.api, token)
  expect((await onA.send('PATCH', `OrderLines(${data.lines[0]})`, { Quantity: 4 })).status).toBe(204)

  const onB = on(b.url, onA)
  const seen = await onB.get(`Orders(${data.order})?$select=Total`)
  expect(seen.body.Total).toBe(243.3)
  const retriedOnA = await on(a.url, onB).at(onB.index, 'GET', `Orders(${data.order})?$select=Total`)
  expect(retriedOnA.body).toEqual(seen.body)

  expect((await onB.commit()).status).toBe(200)
  expect((await call(`${a.api}/Orders(${data.order})?$select=Total`, { token })).body.Total).toBe(243.3)
})

it('survives a restart of the server in the middle of a workflow', async () => {
  const data = await saveSalesData(a.api, token, 20)
  const before = await WorkflowClient.start(a.api, token)
  const created = await before.send('POST', 'Customers?$select=Name', { Name: 'Across a restart' })
  expect(created.status).toBe(200)
  expect((await before.send('DELETE', `OrderLines(${data.lines[1]})`)).status).toBe(204)

  await a.server.stop()
  restarted = await startAnother(a.configPath)
  // The same client, the same access token (signed with the configured key), the next index.
  const continued = on(restarted.url, before)

  expect((await continued.get(`Customers(${created.body.Guid})?$select=Name`)).body.Name).toBe('Across a restart')
  expect((await continued.get(`Orders(${data.order})?$select=Total`)).body.Total).toBe(25.98)
  expect((await continued.commit()).status).toBe(200)
  expect((await call(`${restarted.url}/api/Orders(${data.order})?$select=Total`, { token })).body.Total).toBe(25.98)
})
