// Workflow:MaxOpenPerUser: a user holds at most that many open workflows of a tenant, so a
// script cannot fill the tenant database with workflows; a commit, an abort or an expiry frees
// a slot, and starts racing for the last slot let exactly one through.

import { afterAll, beforeAll, expect, it } from 'vitest'
import type pg from 'pg'
import { call, startTestServer, type TestServer, type TestUser } from '../support/test-server.ts'
import { tenantPool } from '../auth/helpers.ts'
import { WorkflowClient } from './helpers.ts'

const MAX_OPEN = 3
/** Simultaneous starts at the last slot; the tenant's pool lets them all reach the database at once. */
const RACERS = 10
/** One user per test: each fills its own slots. */
const USERS: Record<string, TestUser> = Object.fromEntries(
  ['freeing', 'expiring', 'racing', 'bystander'].map((name) => [name, { username: name, password: `${name}-password-1`, fullAccess: true }]),
)

let server: TestServer
let pool: pg.Pool

beforeAll(async () => {
  server = await startTestServer({ users: Object.values(USERS), config: { Workflow: { MaxOpenPerUser: MAX_OPEN }, Database: { PoolSizePerTenant: RACERS + 2 } } })
  pool = tenantPool(server, server.tenants[0], 2)
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

const tokenOf = (user: TestUser) => server.token(server.tenants[0], user.username, user.password)
const startAs = (token: string) => call(`${server.api}/workflow`, { method: 'POST', token })

async function fill(token: string, count = MAX_OPEN): Promise<WorkflowClient[]> {
  const open: WorkflowClient[] = []
  for (let i = 0; i < count; i++) open.push(await WorkflowClient.start(server.api, token))
  return open
}

function expectRefused(answer: Awaited<ReturnType<typeof startAs>>, open: readonly WorkflowClient[]): void {
  expect(answer.status, answer.text).toBe(400)
  expect(answer.body.error.code).toBe('WorkflowLimitExceeded')
  expect(answer.body.error.target).toBe('Workflow:MaxOpenPerUser')
  expect(answer.body.error.message).toContain(`at most ${MAX_OPEN} open workflows`)
  expect(answer.body.error.message).toContain('commit or abort')
  // The open ones are named, so a client that lost their ids can still end them.
  expect(answer.body.error.details.map((detail: { target: string }) => detail.target).sort()).toEqual(open.map((workflow) => workflow.id).sort())
}

it('refuses a start past the limit, naming the key and the open workflows; a commit or an abort frees a slot', async () => {
  const token = await tokenOf(USERS.freeing)
  const open = await fill(token)
  expectRefused(await startAs(token), open)

  // Another user of the tenant is not bounded by this one's workflows.
  expect((await startAs(await tokenOf(USERS.bystander))).status).toBe(200)

  expect((await open[0].abort()).status).toBe(200)
  const replacing = await startAs(token)
  expect(replacing.status, replacing.text).toBe(200)
  expectRefused(await startAs(token), [...open.slice(1), new WorkflowClient(server.api, token, replacing.body.workflowId)])

  expect((await open[1].send('POST', 'Customers', { Name: 'Committed in a full hand' })).status).toBe(200)
  expect((await open[1].commit()).status).toBe(200)
  expect((await startAs(token)).status).toBe(200)
})

it('does not count an expired workflow', async () => {
  const token = await tokenOf(USERS.expiring)
  const open = await fill(token)
  expectRefused(await startAs(token), open)
  await pool.query(`update "_Workflow" set "ExpiresAt" = now() - interval '1 second' where "Id" = $1`, [open[0].id])
  expect((await startAs(token)).status).toBe(200)
})

it('lets exactly one of simultaneous starts take the last slot', async () => {
  const token = await tokenOf(USERS.racing)
  await fill(token, MAX_OPEN - 1)
  const user = (await pool.query(`select "Guid" from "User" where "Username" = $1`, [USERS.racing.username])).rows[0].Guid
  // The starts race in earnest: holding the user's row keeps each insert waiting (for its
  // reference to the user) until all of them are past counting, as on a busy database.
  const holder = await pool.connect()
  let answers: Awaited<ReturnType<typeof startAs>>[]
  try {
    await holder.query('begin')
    await holder.query(`select 1 from "User" where "Guid" = $1 for update`, [user])
    const racing = Promise.all(Array.from({ length: RACERS }, () => startAs(token)))
    // Watched from another connection: inside a transaction, pg_stat_activity stays as first read.
    for (;;) {
      const { rows } = await pool.query(
        "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      )
      if (rows[0].waiting === RACERS) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await holder.query('commit')
    answers = await racing
  } finally {
    holder.release()
  }
  expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array<number>(RACERS - 1).fill(400)])
  const { rows } = await pool.query(`select count(*)::int as n from "_Workflow" where "UserGuid" = $1`, [user])
  expect(rows[0].n).toBe(MAX_OPEN)
})

it("counts a user's open workflows by an index of their user, not a scan of the tenant's workflows", async () => {
  const client = await pool.connect()
  try {
    // The table is a few rows here: what matters is that such an index exists for the count.
    await client.query('set enable_seqscan = off')
    const plan = await client.query(`explain select count(*) from "_Workflow" where "UserGuid" = $1::uuid and "Status" = 'open' and "ExpiresAt" > now()`, [
      '00000000-0000-0000-0000-000000000000',
    ])
    expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/_Workflow_user/)
  } finally {
    await client.query('reset enable_seqscan')
    client.release()
  }
})
