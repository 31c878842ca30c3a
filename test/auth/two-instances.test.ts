// Two server instances on the same databases (startServer twice on one config): a change
// made through one reaches the other's caches by LISTEN/NOTIFY before its next request.
import { afterAll, beforeAll, expect, it } from 'vitest'
import pino from 'pino'
import { startServer, type RunningServer } from '../../server/start.ts'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { basic, cli, eventually, FIXTURE_PLUGINS, tokens } from './helpers.ts'

let a: TestServer
let b: RunningServer
let bApi: string

beforeAll(async () => {
  a = await startTestServer({ pluginsDir: FIXTURE_PLUGINS, users: [ADMIN, { username: 'clerk', password: 'clerk-password-1' }, { username: 'racer', password: 'racer-password-1' }] })
  b = await startServer({ configPath: a.configPath, port: 0, logger: pino({ level: 'silent' }) })
  bApi = `${b.url}/api`
})
afterAll(async () => {
  await b?.stop()
  await a?.stop()
})

const treeOnB = (headers: Record<string, string>) => call(`${bApi}/roles/tree`, { headers })

it('accepts on B an access token signed in on A, and a refresh token too', async () => {
  const { accessToken, refreshToken } = await tokens(a)
  expect((await treeOnB({ Authorization: `Bearer ${accessToken}` })).status).toBe(200)
  expect((await call(`${bApi}/auth/refresh`, { method: 'POST', body: { RefreshToken: refreshToken } })).status).toBe(200)
  // Used on B: reuse on A is detected.
  expect((await call(`${a.api}/auth/refresh`, { method: 'POST', body: { RefreshToken: refreshToken } })).status).toBe(401)
})

it('refuses on B, on the next request, a PAT used on B and revoked on A', async () => {
  const { accessToken } = await tokens(a)
  const issued = await call(`${a.api}/user/pats`, { method: 'POST', token: accessToken, body: { name: 'ci', expirationDays: 5, responsibilityIds: [] } })
  expect(issued.status).toBe(200)
  for (let i = 0; i < 3; i++) expect((await treeOnB(basic(issued.body.secret))).status).toBe(200)
  expect((await call(`${a.api}/user/pats/${issued.body.id}/revoke`, { method: 'POST', token: accessToken })).status).toBe(200)
  expect((await treeOnB(basic(issued.body.secret))).status).toBe(401)
})

it('refuses on B the old secret of a PAT regenerated on A, and accepts the new one', async () => {
  const { accessToken } = await tokens(a)
  const issued = await call(`${a.api}/user/pats`, { method: 'POST', token: accessToken, body: { name: 'ci', expirationDays: 5, responsibilityIds: [] } })
  expect((await treeOnB(basic(issued.body.secret))).status).toBe(200)
  const regenerated = await call(`${a.api}/user/pats/${issued.body.id}/regenerate`, { method: 'POST', token: accessToken })
  expect((await treeOnB(basic(issued.body.secret))).status).toBe(401)
  expect((await treeOnB(basic(regenerated.body.secret))).status).toBe(200)
})

it('refuses on both instances a user disabled from the CLI', async () => {
  const { accessToken } = await tokens(a, 'clerk', 'clerk-password-1')
  const headers = { Authorization: `Bearer ${accessToken}` }
  expect((await call(`${a.api}/user/pats`, { headers })).status).toBe(200)
  expect((await call(`${bApi}/user/pats`, { headers })).status).toBe(200)
  expect((await cli(a.configPath, 'user', 'disable', '--tenant', a.tenants[0], '--username', 'clerk')).code).toBe(0)
  await eventually(async () => {
    expect((await call(`${a.api}/user/pats`, { headers })).status).toBe(401)
    expect((await call(`${bApi}/user/pats`, { headers })).status).toBe(401)
  }, 1_000)
})

it('counts sign-in attempts on A and B together: of 40 concurrent wrong passwords, MaxFailures are checked', async () => {
  const wrong = { TenantId: a.tenants[0], Username: 'mallory', Password: 'wrong-password' }
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) => call(`${i % 2 === 0 ? a.api : bApi}/auth/signin`, { method: 'POST', body: wrong })),
  )
  // SignIn:MaxFailures is 5 by default; the counters are rows of the tenant database.
  expect(answers.filter((answer) => answer.status === 401)).toHaveLength(5)
  expect(answers.filter((answer) => answer.status === 429)).toHaveLength(35)
})

it('judges on B, at its next request, a role granted or removed through the API on A: no stale answer in 150 rounds', async () => {
  for (const args of [['role', 'add', 'Writers'], ['role', 'grant', 'Writers', 'WriteNotes']]) {
    expect((await cli(a.configPath, ...args, '--tenant', a.tenants[0])).code).toBe(0)
  }
  const admin = (await tokens(a)).accessToken
  const { accessToken: racer } = await tokens(a, 'racer', 'racer-password-1')
  const guidOf = async (set: string, filter: string) => (await call(`${a.api}/${set}?$select=Guid&$filter=${filter}`, { token: admin })).body.value[0].Guid as string
  const user = await guidOf('Users', "Username eq 'racer'")
  const role = await guidOf('Roles', "Name eq 'Writers'")
  const writeOnB = () => call(`${bApi}/Notes`, { method: 'POST', token: racer, body: { Text: 'race' } })
  expect((await writeOnB()).status).toBe(403)
  const stale: string[] = []
  for (let round = 0; round < 150; round++) {
    // A request on B in flight while A changes the role: it may load and cache the old access.
    const racing = writeOnB()
    const granted = await call(`${a.api}/UserRoles`, { method: 'POST', token: admin, body: { 'User@odata.bind': `Users(${user})`, 'Role@odata.bind': `Roles(${role})` } })
    expect(granted.status, granted.text).toBe(200)
    await racing
    const afterGrant = await writeOnB()
    if (afterGrant.status !== 200) stale.push(`round ${round}: ${afterGrant.status} after the grant`)
    const racingRemoval = writeOnB()
    const removed = await call(`${a.api}/UserRoles(${granted.body.Guid})`, { method: 'DELETE', token: admin })
    expect(removed.status).toBe(204)
    await racingRemoval
    const afterRemoval = await writeOnB()
    if (afterRemoval.status !== 403) stale.push(`round ${round}: ${afterRemoval.status} after the removal`)
  }
  expect(stale).toEqual([])
}, 120_000)
