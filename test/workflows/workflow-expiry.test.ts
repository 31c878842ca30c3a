// A workflow idle for Workflow:IdleTimeoutMinutes expires (404 WorkflowNotFound) and the
// node-cron sweep discards its rows; one in use does not expire.

import { afterAll, beforeAll, expect, it } from 'vitest'
import type pg from 'pg'
import pino from 'pino'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import type { Services } from '../../server/start.ts'
import { startWorkflowSweep } from '../../server/workflows/workflow-sweep.ts'
import { NO_METRICS } from '../../server/metrics/metrics.ts'
import { startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from './helpers.ts'
import { tenantPool } from '../auth/helpers.ts'

const IDLE_MINUTES = 0.02 // 1.2 s

let server: TestServer
let token: string
let pool: pg.Pool

beforeAll(async () => {
  server = await startTestServer({ config: { Workflow: { IdleTimeoutMinutes: IDLE_MINUTES } } })
  token = await server.token()
  pool = tenantPool(server, server.tenants[0], 1)
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const workflows = async () => Number((await pool.query('select count(*) as n from "_Workflow"')).rows[0].n)

it('expires after the idle timeout: every call then answers 404 WorkflowNotFound', async () => {
  const workflow = await WorkflowClient.start(server.api, token)
  expect((await workflow.send('POST', 'Customers', { Name: 'Expiring' })).status).toBe(200)
  await idle(IDLE_MINUTES * 60_000 + 300)
  for (const answer of [await workflow.get('Customers'), await workflow.commit(), await workflow.abort()]) {
    expect(answer.status).toBe(404)
    expect(answer.body.error.code).toBe('WorkflowNotFound')
    // Each says why, abort too: not 'never created here, or it belongs to someone else'.
    expect(answer.body.error.message).toContain(`it expired after ${IDLE_MINUTES} minutes without a request`)
  }
})

it('does not expire while it is used', async () => {
  const workflow = await WorkflowClient.start(server.api, token)
  for (let i = 0; i < 4; i++) {
    await idle(IDLE_MINUTES * 60_000 * 0.5)
    expect((await workflow.get('Customers?$top=1')).status).toBe(200)
  }
  expect((await workflow.commit()).status).toBe(200)
})

it('is discarded by the sweep', async () => {
  const workflow = await WorkflowClient.start(server.api, token)
  expect((await workflow.send('POST', 'Customers', { Name: 'Swept' })).status).toBe(200)
  await idle(IDLE_MINUTES * 60_000 + 300)
  expect(await workflows()).toBeGreaterThan(0)

  const config = loadConfig(server.configPath, {})
  const tenants = new TenantRegistry(config, await loadModel(config.Server.PluginsDir), TEST_DATABASE_URL)
  const sweep = startWorkflowSweep({ config, tenants, logger: pino({ level: 'silent' }), metrics: NO_METRICS } as unknown as Services)
  try {
    expect(await sweep.run()).toBeGreaterThan(0)
  } finally {
    await sweep.stop()
    await tenants.close()
  }
  expect(await workflows()).toBe(0)
  expect(Number((await pool.query('select count(*) as n from "_WorkflowRequest"')).rows[0].n)).toBe(0)
})
