// A stored request's write plans apply as they did the first time: the instant its rules ran at and
// the Guids it generated (nested creates included) come back, through every rebuild and the commit.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { tenantPool } from '../auth/helpers.ts'
import { WorkflowClient } from './helpers.ts'

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./fixtures/plugins', import.meta.url)) })
  token = await server.token()
})
afterAll(async () => server?.stop())

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const READ = `$select=Name,StampedAt&$expand=Items($select=Guid,Label,MadeAt;$orderby=Label)`

it('keeps generated keys and clock-based defaults identical across replays and the commit', async () => {
  const workflow = await WorkflowClient.start(server.api, token)
  // Keys in this order on purpose: the nested items come before the name.
  const created = await workflow.send('POST', `Batches?${READ}`, { Items: [{ Label: 'a' }, { Label: 'b' }], Name: 'First' })
  expect(created.status).toBe(200)
  expect(created.body.StampedAt).toBeTruthy()
  expect(created.body.Items).toHaveLength(2)

  await pause(30)
  expect((await workflow.send('POST', 'Batches', { Name: 'Second' })).status).toBe(200)
  await pause(30)
  const replayed = await workflow.get(`Batches(${created.body.Guid})?${READ}`)
  expect(replayed.body).toMatchObject({ StampedAt: created.body.StampedAt, Items: created.body.Items })

  expect((await workflow.commit()).status).toBe(200)
  const saved = await call(`${server.api}/Batches(${created.body.Guid})?${READ}`, { token })
  // Committed, the items carry the versions of rows written outside a workflow (not its pending ones).
  const committed = created.body.Items.map((item: Record<string, unknown>) => ({ ...item, '@odata.etag': expect.stringMatching(etagAt(1)) }))
  expect(saved.body).toMatchObject({ StampedAt: created.body.StampedAt, Items: committed })
})

it('fails by name, changing nothing, when a stored request is not a write plan this version applies', async () => {
  const workflow = await WorkflowClient.start(server.api, token)
  expect((await workflow.send('POST', 'Batches', { Name: 'Stored the old way' })).status).toBe(200)
  // As the version that replayed HTTP requests stored it: the request's body, no plan.
  const pool = tenantPool(server)
  try {
    await pool.query(`update "_WorkflowRequest" set "Body" = $2::json where "WorkflowId" = $1`, [workflow.id, JSON.stringify({ Name: 'Stored the old way' })])
  } finally {
    await pool.end()
  }
  const next = await workflow.send('POST', 'Batches', { Name: 'Next' })
  expect(next.status).toBe(409)
  expect(next.body.error.message).toMatch(/request 1 of the workflow \(POST \/api\/Batches\) was stored by another version of entityctl.*Abort the workflow/)
  expect((await workflow.commit()).status).toBe(409)
  expect((await workflow.abort()).status).toBe(200)
  const saved = await call(`${server.api}/Batches?$filter=${encodeURIComponent("Name eq 'Stored the old way' or Name eq 'Next'")}`, { token })
  expect(saved.body.value).toEqual([])
})

it('is 409 naming the row, not a validation failure, when a change made outside makes a stored request fail its rules', async () => {
  const outside = (method: string, path: string, body?: unknown) => call(`${server.api}/${path}`, { method, token, body })
  const batch = (await outside('POST', 'Batches', { Name: 'Open batch' })).body.Guid
  const workflow = await WorkflowClient.start(server.api, token)
  expect((await workflow.send('PATCH', `Batches(${batch})`, { Name: 'Renamed inside' })).status).toBe(204)
  // Sealed outside: the workflow's rename would now fail the batch's validation.
  expect((await outside('PATCH', `Batches(${batch})`, { Sealed: true })).status).toBe(204)

  const commit = await workflow.commit()
  expect(commit.status, commit.text).toBe(409)
  expect(commit.body.error.code).toBe('Conflict')
  expect(commit.body.error.message).toContain(`request 1 of the workflow (PATCH /api/Batches(${batch}))`)
  expect(commit.body.error.details).toContainEqual(
    expect.objectContaining({ target: `Batches(${batch})`, message: expect.stringContaining('row version 1 when the workflow changed it, 2 now') }),
  )
  expect((await outside('GET', `Batches(${batch})?$select=Name`)).body.Name).toBe('Open batch')
  expect((await workflow.abort()).status).toBe(200)
})

it('commits a workflow left open by the version before pending versions, whose requests recorded the rows it wrote at versions above zero', async () => {
  const workflow = await WorkflowClient.start(server.api, token)
  const created = await workflow.send('POST', 'Batches', { Name: 'Opened before the upgrade' })
  expect(created.status).toBe(200)
  expect((await workflow.send('PATCH', `Batches(${created.body.Guid})`, { Name: 'Renamed before the upgrade' })).status).toBe(204)
  expect((await workflow.send('PATCH', `Batches(${created.body.Guid})`, { Name: 'Renamed again before the upgrade' })).status).toBe(204)
  // As that version stored them: each version a request found, a pending one too, above zero.
  const pool = tenantPool(server)
  try {
    await pool.query(
      `update "_WorkflowRequest" set "Touched" = (select coalesce(jsonb_agg(jsonb_build_array(t->>0, t->>1, abs((t->>2)::int))), '[]'::jsonb) from jsonb_array_elements("Touched") t)
        where "WorkflowId" = $1`,
      [workflow.id],
    )
  } finally {
    await pool.end()
  }
  expect((await workflow.send('PATCH', `Batches(${created.body.Guid})`, { Name: 'Renamed after the upgrade' })).status).toBe(204)
  const commit = await workflow.commit()
  expect(commit.status, commit.text).toBe(200)
  const saved = await call(`${server.api}/Batches(${created.body.Guid})?$select=Name`, { token })
  expect(saved.body).toMatchObject({ '@odata.etag': expect.stringMatching(etagAt(4)), Name: 'Renamed after the upgrade' })
})

it('commits such a workflow whose request sent If-Match with the ETag it had answered for a row it wrote, above zero then', async () => {
  const workflow = await WorkflowClient.start(server.api, token)
  const created = await workflow.send('POST', 'Batches', { Name: 'Opened before the upgrade' })
  expect(created.status).toBe(200)
  const renamed = await workflow.send('PATCH', `Batches(${created.body.Guid})`, { Name: 'Renamed before the upgrade' }, { 'If-Match': created.headers.get('etag')! })
  expect(renamed.status, renamed.text).toBe(204)
  // As that version stored them: the If-Match it matched, and each version a request found, above zero.
  const pool = tenantPool(server)
  try {
    await pool.query(
      `update "_WorkflowRequest" set "Touched" = (select coalesce(jsonb_agg(jsonb_build_array(t->>0, t->>1, abs((t->>2)::int))), '[]'::jsonb) from jsonb_array_elements("Touched") t),
              "Body" = replace("Body"::text, '"W/\\"-', '"W/\\"')::json
        where "WorkflowId" = $1`,
      [workflow.id],
    )
    const [stored] = (await pool.query(`select "Body"::text as body from "_WorkflowRequest" where "WorkflowId" = $1 and "Index" = 2`, [workflow.id])).rows
    expect(stored.body).toContain('"ifMatch":["W/\\"1\\""]')
  } finally {
    await pool.end()
  }
  const commit = await workflow.commit()
  expect(commit.status, commit.text).toBe(200)
  const saved = await call(`${server.api}/Batches(${created.body.Guid})?$select=Name`, { token })
  expect(saved.body).toMatchObject({ '@odata.etag': expect.stringMatching(etagAt(2)), Name: 'Renamed before the upgrade' })
})

it('commits such a workflow whose request sent If-Match with the ETag of a row it found, its version alone then', async () => {
  const found = await call(`${server.api}/Batches`, { method: 'POST', token, body: { Name: 'Found by the workflow' } })
  const seen = found.headers.get('etag')!
  const workflow = await WorkflowClient.start(server.api, token)
  const renamed = await workflow.send('PATCH', `Batches(${found.body.Guid})`, { Name: 'Renamed before the upgrade' }, { 'If-Match': seen })
  expect(renamed.status, renamed.text).toBe(204)
  // As the version before ETags carried the row's xmin stored it: the If-Match it matched, the version alone.
  const pool = tenantPool(server)
  try {
    const inJson = (text: string) => JSON.stringify(text).slice(1, -1)
    await pool.query(`update "_WorkflowRequest" set "Body" = replace("Body"::text, $2, $3)::json where "WorkflowId" = $1`, [workflow.id, inJson(seen), inJson('W/"1"')])
    const [stored] = (await pool.query(`select "Body"::text as body from "_WorkflowRequest" where "WorkflowId" = $1 and "Index" = 1`, [workflow.id])).rows
    expect(stored.body).toContain('"ifMatch":["W/\\"1\\""]')
  } finally {
    await pool.end()
  }
  const commit = await workflow.commit()
  expect(commit.status, commit.text).toBe(200)
  const saved = await call(`${server.api}/Batches(${found.body.Guid})?$select=Name`, { token })
  expect(saved.body).toMatchObject({ '@odata.etag': expect.stringMatching(etagAt(2)), Name: 'Renamed before the upgrade' })
})
