// The fuzz test of issue #15: hostile but structured requests (hostile-requests.ts) against one
// real server with the demo plugin and a little data, as an admin, a restricted user, no one
// and holders of forged tokens. Every request must get an answer (no reset, no hang), never a
// 5xx other than 501, and every 4xx or 501 must carry an OData error body; afterwards the
// server still answers. Fixed seeds and bounded runs keep it a few seconds long; fast-check
// shrinks a failure to a small request, printed with the seed to replay it.
//
// OPEN_FAMILIES: generators whose failures belong to another part of issue #15 that is not
// merged yet. They run in their own test, which is expected to find a failure (`it.fails`):
// once the fix is merged that test fails, and the family is moved back to the main run by
// emptying its entry here. Nothing else is filtered out.

import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { answerProblem, describeRequest, FAMILIES, forgedTokens, hostileRequests, type Family, type HostileContext, type HostileRequest } from './hostile-requests.ts'
import { NoAnswer, sendRaw } from './send-raw.ts'

/** Family → the part of issue #15 that fixes it (see the coordinator's PARTS.md). */
const OPEN_FAMILIES: Partial<Record<Family, string>> = {}

const SEED = 15_2026
const RUNS_PER_FAMILY: Record<Family, number> = {
  query: 400, sqlEdge: 200, entityWrite: 300, method: 200, workflow: 150, deepExpression: 40, overlongHead: 20, nulLiteral: 20, write: 300, nulBody: 40, oddBody: 60,
  corruptEncoding: 40, systemRoute: 150, batch: 150, refWrite: 150,
}
const REQUEST_TIMEOUT_MS = 15_000

let server: TestServer
let context: HostileContext

beforeAll(async () => {
  const reader = { username: 'reader', password: 'reader-password-1' }
  server = await startTestServer({ tenants: ['t1', 't2'], users: [ADMIN, reader] })
  const admin = await server.token()
  const as = (path: string, method = 'GET', body?: unknown) => call(`${server.api}/${path}`, { method, token: admin, body })
  const created = async (path: string, body: unknown) => {
    const answer = await as(path, 'POST', body)
    expect(answer.status, answer.text).toBe(200)
    return answer.body
  }

  const customer = (await created('Customers', { Name: 'Fuzz', Country: 'DE', City: "O'Brien" })).Guid
  await created('Customers', { Name: 'Émile 😀', Country: 'fr' })
  const product = (await created('Products', { Code: 'PERM', Name: 'Perm steel', Price: 2, Category: 'X' })).Guid
  await created('Products', { Code: 'B2', Name: 'Bolt', Price: 0.5, Category: 'X' })
  const order = await created('Orders?$expand=Lines', {
    Number: 77, 'Customer@odata.bind': `Customers(${customer})`,
    Lines: [{ Quantity: 1, 'Product@odata.bind': `Products(${product})` }, { Quantity: 9, 'Product@odata.bind': `Products(${product})` }],
  })

  // The restricted user reads everything and changes nothing (ReadReports).
  const role = (await created('Roles', { Name: 'Auditor' })).Guid
  const responsibility = (await as(`Responsibilities?$filter=Name eq 'ReadReports'`)).body.value[0].Guid
  await created('RoleResponsibilities', { 'Role@odata.bind': `Roles(${role})`, 'Responsibility@odata.bind': `Responsibilities(${responsibility})` })
  const readerGuid = (await as(`Users?$filter=Username eq 'reader'`)).body.value[0].Guid
  await created('UserRoles', { 'User@odata.bind': `Users(${readerGuid})`, 'Role@odata.bind': `Roles(${role})` })
  const restricted = await server.token(server.tenants[0], reader.username, reader.password)

  const otherAdmin = await server.token(server.tenants[1])
  const otherUserGuid = (await call(`${server.api}/Users?$filter=Username eq 'admin'`, { token: otherAdmin })).body.value[0].Guid
  const { JWT } = loadConfig(server.configPath, {})
  const workflowId = (await as('workflow', 'POST')).body.workflowId
  context = {
    keys: { customer, product, order: order.Guid, line: order.Lines[0].Guid },
    workflowId,
    credentials: {
      admin: `Bearer ${admin}`,
      restricted: `Bearer ${restricted}`,
      none: undefined,
      ...(await forgedTokens({ signingKey: JWT.SigningKey!, issuer: JWT.Issuer, audience: JWT.Audience, tenant: server.tenants[0], otherUserGuid })),
    },
  }
})
afterAll(async () => server?.stop())

/** Sends one request and fails with what is wrong about its answer. */
async function check(request: HostileRequest): Promise<void> {
  let answer: Awaited<ReturnType<typeof sendRaw>>
  try {
    answer = await sendRaw(server.url, request, REQUEST_TIMEOUT_MS)
  } catch (error) {
    if (error instanceof NoAnswer) throw new Error(`${describeRequest(request)}: ${error.message}`)
    throw error
  }
  const problem = answerProblem(request, answer.status, answer.contentType, answer.body)
  if (problem) throw new Error(`${describeRequest(request)}: ${problem}: ${answer.body.toString('utf8').slice(0, 300)}`)
}

const property = (families: readonly Family[]) => fc.asyncProperty(hostileRequests(context, families), check)
const runsOf = (families: readonly Family[]) => families.reduce((sum, family) => sum + RUNS_PER_FAMILY[family], 0)

describe('hostile requests', () => {
  const closed = FAMILIES.filter((family) => !(family in OPEN_FAMILIES))

  for (const family of closed) {
    it(`${family}: every answer is a success, a 4xx or 501 with an OData error body, never a 5xx or a dropped connection`, async () => {
      await fc.assert(property([family]), { seed: SEED, numRuns: RUNS_PER_FAMILY[family], endOnFailure: false })
    }, 120_000)
  }

  for (const [family, part] of Object.entries(OPEN_FAMILIES) as [Family, string][]) {
    // Still failing until `part` is merged; when this test fails, delete the entry above.
    it.fails(`${family} (open: ${part}): still finds a bad answer`, async () => {
      await fc.assert(property([family]), { seed: SEED, numRuns: RUNS_PER_FAMILY[family] })
    }, 120_000)
  }

  it('leaves the server answering', async () => {
    expect(runsOf(closed)).toBeGreaterThan(0)
    const metadata = await sendRaw(server.url, { method: 'GET', path: '/api/$metadata', headers: { authorization: context.credentials.admin! } }, REQUEST_TIMEOUT_MS)
    expect(metadata.status).toBe(200)
    const read = await sendRaw(server.url, { method: 'GET', path: '/api/Products?$select=Code', headers: { authorization: context.credentials.admin! } }, REQUEST_TIMEOUT_MS)
    expect(read.status, read.body.toString()).toBe(200)
  })
})
