// Issue 6: two `entityctl serve` processes on one database. A PAT used on B and revoked on
// A is refused by B on the very next request: the revocation reaches B's scope cache by
// LISTEN/NOTIFY, across processes, before A answers the revoke.

import { afterAll, beforeAll, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'
import { basic, FIXTURE_PLUGINS, tokens } from './helpers.ts'

let a: TestServer
let b: ServeProcess

beforeAll(async () => {
  a = await startTestServer({ pluginsDir: FIXTURE_PLUGINS, config: { ApiOptions: { ResponsibilityCacheExpirationMinutes: 60 } } })
  b = await serveProcess(a.configPath)
})
afterAll(async () => {
  await b?.stop()
  await a?.stop()
})

it('refuses on process B, on the next request, a PAT revoked on A', async () => {
  const { accessToken } = await tokens(a)
  const issued = await call(`${a.api}/user/pats`, { method: 'POST', token: accessToken, body: { name: 'two-processes', expirationDays: 5, responsibilityIds: [] } })
  expect(issued.status).toBe(200)
  // Used on B until B has it cached.
  for (let i = 0; i < 3; i++) expect((await call(`${b.api}/roles/tree`, { headers: basic(issued.body.secret) })).status).toBe(200)
  expect((await call(`${a.api}/user/pats/${issued.body.id}/revoke`, { method: 'POST', token: accessToken })).status).toBe(200)
  const refused = await call(`${b.api}/roles/tree`, { headers: basic(issued.body.secret) })
  expect(refused.status).toBe(401)
  expect(refused.body.error.code).toBe('Unauthorized')
})

it('refuses on process B, on the next request, a PAT regenerated on A, and accepts the new secret', async () => {
  const { accessToken } = await tokens(a)
  const issued = await call(`${a.api}/user/pats`, { method: 'POST', token: accessToken, body: { name: 'rotated', expirationDays: 5, responsibilityIds: [] } })
  expect((await call(`${b.api}/roles/tree`, { headers: basic(issued.body.secret) })).status).toBe(200)
  const regenerated = await call(`${a.api}/user/pats/${issued.body.id}/regenerate`, { method: 'POST', token: accessToken })
  expect(regenerated.status).toBe(200)
  expect((await call(`${b.api}/roles/tree`, { headers: basic(issued.body.secret) })).status).toBe(401)
  expect((await call(`${b.api}/roles/tree`, { headers: basic(regenerated.body.secret) })).status).toBe(200)
})
