// POST /api/auth/signin and /api/auth/refresh against a real server and database.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type pg from 'pg'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { announced, cli, eventually, signIn, tenantPool, tokens } from './helpers.ts'


const CLERK = { username: 'clerk', password: 'clerk-password-1' }
let server: TestServer
let pool: pg.Pool

beforeAll(async () => {
  server = await startTestServer({
    tenants: ['t1', 't2'],
    users: [ADMIN, CLERK, { username: 'locked', password: 'locked-password' }, { username: 'gone', password: 'gone-password-1' }],
    config: {
      // The tests reach the server from 127.0.0.1, a trusted proxy: X-Forwarded-For names the
      // client, so each test can be its own client. 127.0.0.2 is an untrusted client.
      Server: { TrustedProxies: '127.0.0.1' },
      SignIn: { MaxFailures: 3, LockoutSeconds: 60, MaxFailuresPerAddress: 6, AddressLockoutSeconds: 60 },
    },
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

  it('gives the same 401 for a wrong tenant, user or password, after the same password work', async () => {
    const cases = [
      { TenantId: server.tenants[0], Username: CLERK.username, Password: CLERK.password },
      { TenantId: 'no-such-tenant', Username: ADMIN.username, Password: ADMIN.password },
      { TenantId: server.tenants[0], Username: 'nobody', Password: ADMIN.password },
      { TenantId: server.tenants[0], Username: CLERK.username, Password: 'wrong-password' },
    ]
    // Timing itself is noise on a shared machine; the work is not: the server announces each
    // scrypt verification with its cost, and every case must do exactly one, of the same cost.
    const answers = []
    for (const fields of cases) {
      const work: unknown[] = []
      const seen = (message: unknown) => work.push(message)
      subscribe('entityctl:password-verification', seen)
      try {
        const response = await signInFrom('192.0.2.1', fields)
        answers.push({ status: response.status, body: response.text, work, auth: response.headers.get('www-authenticate') })
      } finally {
        unsubscribe('entityctl:password-verification', seen)
      }
    }
    expect(answers.map((a) => a.status)).toEqual([200, 401, 401, 401])
    const refusals = answers.slice(1)
    expect(new Set(refusals.map((a) => a.body)).size).toBe(1)
    expect(refusals[0].auth).toContain('Bearer')
    expect(JSON.parse(refusals[0].body).error.code).toBe('Unauthorized')
    const realWork = answers[0].work
    expect(realWork).toHaveLength(1)
    for (const answer of refusals) expect(answer.work).toEqual(realWork)
  })

  it.each([
    ['no body fields', {}, 'TenantId'],
    ['a missing password', { TenantId: 't', Username: 'u' }, 'Password'],
    ['a number as user name', { TenantId: 't', Username: 42, Password: 'x' }, 'Username'],
    ['an array as tenant', { TenantId: ['t'], Username: 'u', Password: 'x' }, 'TenantId'],
    ['a NUL in the user name', { TenantId: 't', Username: 'u\u0000v', Password: 'x' }, 'Username'],
  ])('answers 400 for %s', async (_, fields, target) => {
    const response = await signIn(server, fields)
    expect(response.status).toBe(400)
    expect(response.body.error.target).toBe(target)
  })

  it('answers 400 naming the expected fields for a body with other field names, not the 401 of a wrong password', async () => {
    const wrong = await signIn(server, { tenant: server.tenants[0], user: ADMIN.username, Password: ADMIN.password })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.code).toBe('InvalidRequest')
    expect(wrong.body.error.message).toBe('Unknown fields "tenant", "user": the body has the fields TenantId, Username, Password.')
    expect(wrong.body.error.target).toBe('tenant')
    const extra = await signIn(server, { TenantId: server.tenants[0], Username: ADMIN.username, Password: ADMIN.password, remember: true })
    expect(extra.status).toBe(400)
    expect(extra.body.error.message).toContain('"remember"')
    const missing = await signIn(server, { TenantId: server.tenants[0], Password: ADMIN.password })
    expect(missing.status).toBe(400)
    expect(missing.body.error.message).toBe('Username is required: the body has the fields TenantId, Username, Password.')
    const refreshed = await call(`${server.api}/auth/refresh`, { method: 'POST', body: { token: 'ectl_rt_x.y.z' } })
    expect(refreshed.status).toBe(400)
    expect(refreshed.body.error.message).toBe('Unknown field "token": the body has the fields RefreshToken.')
  })

  it('names the expected fields in lower camel case when EnableLowerCamelCase is on, and accepts them', async () => {
    const camel = await startTestServer({ config: { ApiOptions: { EnableLowerCamelCase: true } } })
    try {
      const wrong = await signIn(camel, { tenant: camel.tenants[0], username: ADMIN.username, password: ADMIN.password })
      expect(wrong.status).toBe(400)
      expect(wrong.body.error.message).toBe('Unknown field "tenant": the body has the fields tenantId, username, password.')
      const right = await signIn(camel, { tenantId: camel.tenants[0], username: ADMIN.username, password: ADMIN.password })
      expect(right.status, right.text).toBe(200)
      const refreshed = await call(`${camel.api}/auth/refresh`, { method: 'POST', body: { refreshToken: right.body.refreshToken } })
      expect(refreshed.status, refreshed.text).toBe(200)
    } finally {
      await camel.stop()
    }
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
    await announced(server)
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
    for (let i = 0; i < 3; i++) expect((await signInFrom('192.0.2.2', wrong)).status).toBe(401)
    const throttled = await signInFrom('192.0.2.2', { ...wrong, Password: 'locked-password' })
    expect(throttled.status).toBe(429)
    expect(throttled.body.error.code).toBe('TooManyRequests')
    // It names the limit that refused it, and the key that sets it.
    expect(throttled.body.error.target).toBe('SignIn:MaxFailures')
    expect(throttled.body.error.message).toMatch(/^Too many failed sign-ins of this user name \(SignIn:MaxFailures within SignIn:WindowSeconds\); try again in (59|60) s\.$/)
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(59)
    expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    // Another user of the same tenant, from the same address, is not affected.
    expect((await signInFrom('192.0.2.2', { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password })).status).toBe(200)
    // The lockout passes (moved into the past rather than waited for).
    await pool.query(`update "_SignInLimit" set "LockedUntil" = now() where "Scope" = 'user' and "Key" = 'locked'`)
    expect((await signInFrom('192.0.2.2', { ...wrong, Password: 'locked-password' })).status).toBe(200)
  })

  it('forgives a user\'s earlier failures when the right password comes', async () => {
    const wrong = { TenantId: server.tenants[0], Username: CLERK.username, Password: 'not-the-password' }
    // Starting from none (earlier tests failed for the clerk too).
    expect((await signInFrom('192.0.2.3', { ...wrong, Password: CLERK.password })).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await signInFrom('192.0.2.3', wrong)).status).toBe(401)
    expect((await signInFrom('192.0.2.3', { ...wrong, Password: CLERK.password })).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await signInFrom('192.0.2.4', wrong)).status).toBe(401)
    expect((await signInFrom('192.0.2.4', { ...wrong, Password: CLERK.password })).status).toBe(200)
  })

  it.each([
    ['a known user', 'locked'],
    ['an unknown user, the same way', 'nobody-at-all'],
  ])('lets through exactly MaxFailures of 40 concurrent wrong passwords for %s; the rest are 429', async (_, username) => {
    const tenant = server.tenants[1]
    const wrong = { TenantId: tenant, Username: username, Password: 'wrong-password' }
    // Each attempt from its own address: only the user's counter can stop them.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => signInFrom(`198.51.100.${i + 1}`, wrong)))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 401)).toHaveLength(3)
    expect(statuses.filter((s) => s === 429)).toHaveLength(37)
    for (const answer of answers.filter((a) => a.status === 429)) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // The name is locked, for a right password too.
    const right = await signInFrom('198.51.100.99', { ...wrong, Password: 'locked-password' })
    expect(right.status).toBe(429)
  })

  it('holds the lock in the database, where every instance sees it', async () => {
    const other = tenantPool(server, server.tenants[1])
    try {
      const { rows } = await other.query(`select "LockedUntil" from "_SignInLimit" where "Scope" = 'user' and "Key" = 'locked'`)
      expect(rows[0].LockedUntil.getTime()).toBeGreaterThan(Date.now())
    } finally {
      await other.end()
    }
  })

  it('throttles one address trying many user names (password spraying)', async () => {
    const tenant = server.tenants[0]
    const names = ['ann', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal']
    const statuses = []
    for (const name of names) statuses.push((await signInFrom('203.0.113.7', { TenantId: tenant, Username: name, Password: 'Summer2026!' })).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429])
    // The address is locked, even for a right password; another address is not.
    const locked = await signInFrom('203.0.113.7', { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password })
    expect(locked.status).toBe(429)
    expect(locked.body.error.target).toBe('SignIn:MaxFailuresPerAddress')
    expect(locked.body.error.message).toContain('from this client address (SignIn:MaxFailuresPerAddress within SignIn:WindowSeconds)')
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(59)
    expect((await signInFrom('203.0.113.8', { TenantId: tenant, Username: 'ann', Password: 'Summer2026!' })).status).toBe(401)
  })

  it('counts IPv6 clients by their /64 network', async () => {
    const tenant = server.tenants[0]
    const statuses = []
    for (let i = 1; i <= 7; i++) {
      statuses.push((await signInFrom(`2001:db8:1:2::${i}`, { TenantId: tenant, Username: `v6-${i}`, Password: 'Summer2026!' })).status)
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429])
  })

  it('believes X-Forwarded-For only from a trusted proxy: a client cannot escape its limit by inventing one', async () => {
    const tenant = server.tenants[0]
    const statuses = []
    for (let i = 1; i <= 7; i++) {
      // Straight from 127.0.0.2, not a trusted proxy: each time another made-up address.
      const answer = await post('127.0.0.2', { TenantId: tenant, Username: `spoof-${i}`, Password: 'Summer2026!' }, { 'X-Forwarded-For': `192.0.2.${100 + i}` })
      statuses.push(answer.status)
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429])
    // Through the trusted proxy, the address it appended counts, not one the client put before it.
    const chained = []
    for (let i = 1; i <= 7; i++) {
      chained.push((await signInFrom(`10.9.9.${i}, 192.0.2.200`, { TenantId: tenant, Username: `chain-${i}`, Password: 'Summer2026!' })).status)
    }
    expect(chained).toEqual([401, 401, 401, 401, 401, 401, 429])
  })

  it('throttles an unknown tenant too, so it looks like a known one', async () => {
    const wrong = { TenantId: 'unknown-tenant', Username: 'someone', Password: 'nope' }
    for (let i = 0; i < 3; i++) expect((await signInFrom('192.0.2.5', wrong)).status).toBe(401)
    expect((await signInFrom('192.0.2.5', wrong)).status).toBe(429)
    const spray = []
    for (let i = 1; i <= 7; i++) spray.push((await signInFrom('192.0.2.6', { ...wrong, Username: `someone-${i}` })).status)
    expect(spray).toEqual([401, 401, 401, 401, 401, 401, 429])
  })
})

describe('the tenant-wide limit', () => {
  let small: TestServer
  beforeAll(async () => {
    small = await startTestServer({
      users: [ADMIN],
      config: {
        Server: { TrustedProxies: '127.0.0.1' },
        SignIn: { MaxFailures: 100, MaxFailuresPerAddress: 0, MaxFailuresPerTenant: 5, TenantLockoutSeconds: 60 },
      },
    })
  })
  afterAll(async () => {
    await small?.stop()
  })

  it('lets through exactly MaxFailuresPerTenant of many concurrent attempts from many addresses, then locks the tenant', async () => {
    const tenant = small.tenants[0]
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(`${small.api}/auth/signin`, {
          method: 'POST',
          body: { TenantId: tenant, Username: `user-${i}`, Password: 'Summer2026!' },
          headers: { 'X-Forwarded-For': `198.51.100.${i + 1}` },
        }),
      ),
    )
    expect(answers.filter((a) => a.status === 401)).toHaveLength(5)
    expect(answers.filter((a) => a.status === 429)).toHaveLength(15)
    const admin = await call(`${small.api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password } })
    expect(admin.status).toBe(429)
    expect(admin.body.error.target).toBe('SignIn:MaxFailuresPerTenant')
    expect(admin.body.error.message).toContain('to this tenant (SignIn:MaxFailuresPerTenant within SignIn:WindowSeconds)')
    expect(Number(admin.headers.get('retry-after'))).toBeGreaterThanOrEqual(59)
  })
})

/** A sign-in through the trusted proxy (127.0.0.1) for the client `forwardedFor`. */
function signInFrom(forwardedFor: string, fields: Record<string, unknown>) {
  return call(`${server.api}/auth/signin`, { method: 'POST', body: fields, headers: { 'X-Forwarded-For': forwardedFor } })
}

/** A sign-in sent from the local address `from`. */
function post(from: string, fields: Record<string, unknown>, headers: Record<string, string>): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${server.api}/auth/signin`, { method: 'POST', localAddress: from, headers: { 'Content-Type': 'application/json', ...headers } }, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0 }))
    })
    outgoing.on('error', reject)
    outgoing.end(JSON.stringify(fields))
  })
}

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
    const { refreshToken, accessToken } = await tokens(server)
    const forged = refreshToken.replace(server.tenants[0], server.tenants[1])
    const flipped = refreshToken.slice(0, -1) + (refreshToken.endsWith('A') ? 'B' : 'A')
    // An access token (longer than any refresh token) and any long string are just not refresh tokens.
    for (const token of ['garbage', 'ectl_rt_x.y.z', forged, flipped, accessToken, 'x'.repeat(100_000)]) {
      const refused = await refresh(token)
      expect(refused.status, token.slice(0, 40)).toBe(401)
      expect(refused.body.error.code).toBe('Unauthorized')
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
