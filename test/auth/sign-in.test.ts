// POST /api/auth/signin and /api/auth/refresh against a real server and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type pg from 'pg'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { cli, eventually, signIn, tenantPool, tokens } from './helpers.ts'


const CLERK = { username: 'clerk', password: 'clerk-password-1' }
let server: TestServer
let pool: pg.Pool

beforeAll(async () => {
  server = await startTestServer({
    tenants: ['t1', 't2'],
    users: [ADMIN, CLERK, { username: 'locked', password: 'locked-password' }, { username: 'gone', password: 'gone-password-1' }],
    config: { SignIn: { MaxFailures: 3, LockoutSeconds: 2 } },
  })
  pool = tenantPool(server)
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

describe('sign-in', () => {
  it('answers 200 with both tokens, their expiry and the Bearer type', async () => {
    const response = await signIn(server, { TenantId: server.tenants[0], Username: ADMIN.username, Password: ADMIN.password })
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = response.body
    expect(Object.keys(body).sort()).toEqual(['accessToken', 'accessTokenExpiresAt', 'refreshToken', 'refreshTokenExpiresAt', 'tokenType'])
    expect(body.tokenType).toBe('Bearer')
    expect(body.refreshToken).toMatch(new RegExp(`^ectl_rt_${server.tenants[0]}\\.`))
    const minutes = (Date.parse(body.accessTokenExpiresAt) - Date.now()) / 60_000
    expect(minutes).toBeGreaterThan(29)
    expect(minutes).toBeLessThanOrEqual(30)
    const days = (Date.parse(body.refreshTokenExpiresAt) - Date.now()) / 86_400_000
    expect(days).toBeCloseTo(14, 1)
    const claims = JSON.parse(Buffer.from(body.accessToken.split('.')[1], 'base64url').toString())
    expect(Object.keys(claims).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'sub', 'tid'])
    expect(claims.tid).toBe(server.tenants[0])
  })

  it('matches the route case-insensitively and accepts lower-camel field names', async () => {
    const upper = await call(`${server.url}/API/Auth/SignIn`, {
      method: 'POST',
      body: { tenantId: server.tenants[0], username: ADMIN.username, password: ADMIN.password },
    })
    expect(upper.status).toBe(200)
  })

  it('gives the same 401 for a wrong tenant, user or password, in about the same time', async () => {
    const cases = [
      { TenantId: 'no-such-tenant', Username: ADMIN.username, Password: ADMIN.password },
      { TenantId: server.tenants[0], Username: 'nobody', Password: ADMIN.password },
      { TenantId: server.tenants[0], Username: CLERK.username, Password: 'wrong-password' },
    ]
    const answers = []
    for (const fields of cases) {
      // Each case twice, the faster counting: one sample can stall on a busy machine. (Twice
      // stays under MaxFailures, 3, so the clerk is not throttled for the tests below.)
      let fastest = Infinity
      let response!: Awaited<ReturnType<typeof signIn>>
      for (let i = 0; i < 2; i++) {
        const started = performance.now()
        response = await signIn(server, fields)
        fastest = Math.min(fastest, performance.now() - started)
      }
      answers.push({ status: response.status, body: response.text, ms: fastest, auth: response.headers.get('www-authenticate') })
    }
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401])
    expect(new Set(answers.map((a) => a.body)).size).toBe(1)
    expect(answers[0].auth).toContain('Bearer')
    expect(JSON.parse(answers[0].body).error.code).toBe('Unauthorized')
    // Each verifies a password (scrypt, tens of ms): none is an order of magnitude faster.
    const fastest = Math.min(...answers.map((a) => a.ms))
    const slowest = Math.max(...answers.map((a) => a.ms))
    expect(fastest).toBeGreaterThan(slowest / 4)
  })

  it.each([
    ['no body fields', {}, 'TenantId'],
    ['a missing password', { TenantId: 't', Username: 'u' }, 'Password'],
    ['a number as user name', { TenantId: 't', Username: 42, Password: 'x' }, 'Username'],
    ['an array as tenant', { TenantId: ['t'], Username: 'u', Password: 'x' }, 'TenantId'],
  ])('answers 400 for %s', async (_, fields, target) => {
    const response = await signIn(server, fields)
    expect(response.status).toBe(400)
    expect(response.body.error.target).toBe(target)
  })

  it('answers 400 for a body that is not a JSON object', async () => {
    for (const body of ['[1,2]', '"text"', '{not json']) {
      const response = await call(`${server.api}/auth/signin`, { method: 'POST', body })
      expect(response.status, body).toBe(400)
    }
  })

  it('refuses a disabled user with the same 401, and as soon as the change is announced when disabled later', async () => {
    const { accessToken } = await tokens(server, CLERK.username, CLERK.password)
    expect((await call(`${server.api}/roles/tree`, { token: accessToken })).status).toBe(403)
    const run = await cli(server.configPath, 'user', 'disable', '--tenant', server.tenants[0], '--username', CLERK.username)
    expect(run.code, run.stderr).toBe(0)
    try {
      // The CLI is another process: the server learns of the change by NOTIFY, within milliseconds.
      await eventually(async () => {
        const refused = await call(`${server.api}/roles/tree`, { token: accessToken })
        expect(refused.status).toBe(401)
        expect(refused.body.error.message).toContain('disabled')
      }, 1_000)
      const response = await signIn(server, { TenantId: server.tenants[0], Username: CLERK.username, Password: CLERK.password })
      expect(response.status).toBe(401)
      expect(response.body.error.message).toBe('Sign-in failed: unknown tenant, user or password.')
    } finally {
      expect((await cli(server.configPath, 'user', 'enable', '--tenant', server.tenants[0], '--username', CLERK.username)).code).toBe(0)
    }
    await eventually(async () => expect((await call(`${server.api}/roles/tree`, { token: accessToken })).status).toBe(403), 1_000)
  })

  it('refuses the token of a deleted user', async () => {
    const { accessToken } = await tokens(server, 'gone', 'gone-password-1')
    expect((await call(`${server.api}/user/pats`, { token: accessToken })).status).toBe(200)
    await pool.query(`delete from "User" where "Username" = 'gone'`)
    await eventually(async () => {
      const refused = await call(`${server.api}/user/pats`, { token: accessToken })
      expect(refused.status).toBe(401)
      expect(refused.body.error.message).toContain('no longer exists')
    }, 1_000)
  })
})

describe('throttling', () => {
  it('answers 429 with Retry-After after MaxFailures failures, and lets the user in once the lockout passed', async () => {
    const tenant = server.tenants[0]
    const wrong = { TenantId: tenant, Username: 'locked', Password: 'not-the-password' }
    for (let i = 0; i < 3; i++) expect((await signIn(server, wrong)).status).toBe(401)
    const throttled = await signIn(server, { ...wrong, Password: 'locked-password' })
    expect(throttled.status).toBe(429)
    expect(throttled.body.error.code).toBe('TooManyRequests')
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(2)
    // Another user of the same tenant, and the same user in another tenant, are not affected.
    expect((await signIn(server, { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password })).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 2_100))
    expect((await signIn(server, { ...wrong, Password: 'locked-password' })).status).toBe(200)
  })

  it('holds the lock in the database, where every instance sees it', async () => {
    const wrong = { TenantId: server.tenants[1], Username: 'locked', Password: 'nope' }
    for (let i = 0; i < 3; i++) await signIn(server, wrong)
    const other = tenantPool(server, server.tenants[1])
    try {
      const { rows } = await other.query(`select "LockedUntil" from "_SignInThrottle" where "Username" = 'locked'`)
      expect(rows[0].LockedUntil.getTime()).toBeGreaterThan(Date.now())
    } finally {
      await other.end()
    }
  })

  it('throttles an unknown tenant too, so it looks like a known one', async () => {
    const wrong = { TenantId: 'unknown-tenant', Username: 'someone', Password: 'nope' }
    for (let i = 0; i < 3; i++) expect((await signIn(server, wrong)).status).toBe(401)
    expect((await signIn(server, wrong)).status).toBe(429)
  })
})

describe('refresh', () => {
  const refresh = (token: unknown) => call(`${server.api}/auth/refresh`, { method: 'POST', body: { RefreshToken: token } })

  it('rotates: each refresh answers new tokens, and the new access token works', async () => {
    const first = await tokens(server)
    const second = await refresh(first.refreshToken)
    expect(second.status).toBe(200)
    expect(second.body.refreshToken).not.toBe(first.refreshToken)
    expect(second.body.tokenType).toBe('Bearer')
    expect((await call(`${server.api}/roles/tree`, { token: second.body.accessToken })).status).toBe(200)
    const third = await refresh(second.body.refreshToken)
    expect(third.status).toBe(200)
  })

  it('detects reuse: a used token is 401 and revokes every token of its family', async () => {
    const first = await tokens(server)
    const second = await refresh(first.refreshToken)
    const reused = await refresh(first.refreshToken)
    expect(reused.status).toBe(401)
    expect(reused.body.error.code).toBe('Unauthorized')
    // The legitimate successor is revoked too: the thief and the owner must sign in again.
    expect((await refresh(second.body.refreshToken)).status).toBe(401)
    // Other sign-ins (other families) are untouched.
    const other = await tokens(server)
    expect((await refresh(other.refreshToken)).status).toBe(200)
  })

  it('refuses an expired refresh token', async () => {
    const { refreshToken } = await tokens(server)
    await pool.query(`update "_RefreshToken" set "ExpiresAt" = now() - interval '1 second' where "UsedAt" is null`)
    expect((await refresh(refreshToken)).status).toBe(401)
  })

  it('refuses malformed, forged and cross-tenant refresh tokens with 401, and a missing one with 400', async () => {
    const { refreshToken } = await tokens(server)
    const forged = refreshToken.replace(server.tenants[0], server.tenants[1])
    for (const token of ['garbage', 'ectl_rt_x.y.z', forged, refreshToken.slice(0, -1) + (refreshToken.endsWith('A') ? 'B' : 'A')]) {
      expect((await refresh(token)).status, token).toBe(401)
    }
    expect((await refresh(undefined)).status).toBe(400)
    expect((await refresh(12)).status).toBe(400)
  })

  it('ends the sessions of a user whose password is set', async () => {
    const { refreshToken } = await tokens(server, CLERK.username, CLERK.password)
    const run = await cli(server.configPath, 'user', 'set-password', '--tenant', server.tenants[0], '--username', CLERK.username, '--password', 'new-clerk-password')
    expect(run.code, run.stderr).toBe(0)
    expect((await refresh(refreshToken)).status).toBe(401)
  })

  it('refuses a refresh for a disabled user', async () => {
    const { refreshToken } = await tokens(server)
    await pool.query(`update "User" set "Disabled" = true where "Username" = $1`, [ADMIN.username])
    try {
      expect((await refresh(refreshToken)).status).toBe(401)
    } finally {
      await pool.query(`update "User" set "Disabled" = false where "Username" = $1`, [ADMIN.username])
    }
  })
})
