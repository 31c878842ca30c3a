// What the log says of a workflow: each request's line names the workflow and the index it
// was sent with, its creation and its commit too, so an operator can follow one from the log.

import { Writable } from 'node:stream'
import pino from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../server/start.ts'
import { startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from './helpers.ts'

let setup: TestServer
let server: RunningServer
const lines: Record<string, unknown>[] = []

beforeAll(async () => {
  setup = await startTestServer()
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line))
      done()
    },
  })
  server = await startServer({ configPath: setup.configPath, port: 0, logger: pino(sink) })
})
afterAll(async () => {
  await server?.stop()
  await setup?.stop()
})

it('names the workflow and the index on the line of each of its requests', async () => {
  const token = await setup.token()
  const workflow = await WorkflowClient.start(`${server.url}/api`, token)
  expect((await workflow.send('POST', 'Customers', { Name: 'Logged' })).status).toBe(200)
  expect((await workflow.get('Customers?$top=1')).status).toBe(200)
  expect((await workflow.commit()).status).toBe(200)

  const requests = () => lines.filter((line) => line.msg === 'request' && line.workflow === workflow.id)
  await expect.poll(() => requests().length).toBe(4)
  expect(requests().map((line) => [line.method, line.url, line.workflowIndex])).toEqual([
    ['POST', '/api/workflow', undefined],
    ['POST', '/api/Customers', 1],
    ['GET', '/api/Customers?$top=1', 2],
    ['POST', '/api/workflow/commit', 3],
  ])
})
