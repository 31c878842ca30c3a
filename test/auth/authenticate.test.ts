// The authenticate stage: which Bearer tokens and Basic headers pass, and that every refusal
// is a 401 with WWW-Authenticate (never a 500), across tenants too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SignJWT } from 'jose'
import { loadConfig } from '../../server/config/load-config.ts'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { basic, tokens } from './helpers.ts'

let server: TestServer
let key: Uint8Array
let adminGuid: string

beforeAll(async () => {
  server = await startTestServer({ tenants: ['t1', 't2'] })
  key = Buffer.from(loadConfig(server.configPath, {}).JWT.SigningKey, 'base64url')
  const { accessToken } = await tokens(server)
  adminGuid = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()).sub
})
afterAll(async () => {
  await server?.stop()
})

async function token(claims: Record<string, unknown>, options: { iss?: string; aud?: string; exp?: number; key?: Uint8Array } = {}) {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject((claims.sub as string) ?? adminGuid)
    .setIssuer(options.iss ?? 'entityctl')
    .setAudience(options.aud ?? 'entityctl-api')
    .setIssuedAt(now - 10)
    .setExpirationTime(options.exp ?? now + 600)
    .sign(options.key ?? key)
}

const tree = (headers: Record<string, string>) => call(`${server.api}/roles/tree`, { headers })
const bearer = (value: string) => ({ Authorization: `Bearer ${value}` })

describe('Bearer tokens', () => {
  it('accepts a token it issued, and one it did not issue but signed with its key and claims', async () => {
    const { accessToken } = await tokens(server)
    expect((await tree(bearer(accessToken))).status).toBe(200)
    expect((await tree(bearer(await token({ tid: server.tenants[0] })))).status).toBe(200)
    expect((await tree({ Authorization: `bearer ${accessToken}` })).status).toBe(200)
  })

  it.each([
    ['no Authorization header', async () => ({}) as Record<string, string>, 'requires authentication'],
    ['a token without tid', async () => bearer(await token({})), 'no tenant'],
    ['a token of another issuer', async () => bearer(await token({ tid: server.tenants[0] }, { iss: 'someone-else' })), 'another issuer'],
    ['a token for another audience', async () => bearer(await token({ tid: server.tenants[0] }, { aud: 'other-api' })), 'another audience'],
    ['an expired token', async () => bearer(await token({ tid: server.tenants[0] }, { exp: Math.floor(Date.now() / 1000) - 5 })), 'expired'],
    ['a token of an unknown tenant', async () => bearer(await token({ tid: 'no-such-tenant' })), 'unknown'],
    ['a token signed with another key', async () => bearer(await token({ tid: server.tenants[0] }, { key: new Uint8Array(32).fill(7) })), 'signature'],
    ['a token whose subject is not a Guid', async () => bearer(await token({ tid: server.tenants[0], sub: 'admin' })), 'subject'],
    ['garbage', async () => bearer('not.a.jwt'), 'malformed'],
    ['an empty Bearer', async () => ({ Authorization: 'Bearer' }), 'malformed'],
    ['an unknown scheme', async () => ({ Authorization: 'Digest abc' }), 'not supported'],
  ])('refuses %s with 401 and WWW-Authenticate', async (_, headers, reason) => {
    const response = await tree(await headers())
    expect(response.status).toBe(401)
    expect(response.body.error.code).toBe('Unauthorized')
    expect(response.body.error.message).toContain(reason)
    expect(response.headers.get('www-authenticate')).toMatch(/Bearer realm=.*Basic realm=/)
  })

  it('refuses an alg=none token', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')
    const payload = Buffer.from(JSON.stringify({ sub: adminGuid, tid: server.tenants[0], iss: 'entityctl', aud: 'entityctl-api', exp: 9e9 })).toString('base64url')
    expect((await tree(bearer(`${header}.${payload}.`))).status).toBe(401)
  })

  it('keeps tenants apart: a token names its tenant, and the user must exist there', async () => {
    // admin exists in both tenants, under different Guids: t1's Guid means nobody in t2.
    const crossed = await tree(bearer(await token({ tid: server.tenants[1], sub: adminGuid })))
    expect(crossed.status).toBe(401)
    expect(crossed.body.error.message).toContain('no longer exists')
    const own = await tokens(server, ADMIN.username, ADMIN.password, server.tenants[1])
    expect((await tree(bearer(own.accessToken))).status).toBe(200)
  })

  it('sends the auth routes under /api only: sign-in stays open, everything else needs a token', async () => {
    expect((await call(`${server.api}/user/pats`)).status).toBe(401)
    expect((await call(`${server.api}/Notes`)).status).toBe(401)
    expect((await call(`${server.api}/auth/signin`, { method: 'POST', body: {} })).status).toBe(400)
  })
})

describe('Basic (PAT) headers', () => {
  it.each([
    ['not base64', 'Basic %%%'],
    ['base64 without a colon', `Basic ${Buffer.from('patsecret').toString('base64')}`],
    ['another user name', `Basic ${Buffer.from('admin:admin-password-1').toString('base64')}`],
    ['an empty secret', `Basic ${Buffer.from('pat:').toString('base64')}`],
    ['a secret without the prefix', `Basic ${Buffer.from('pat:abc').toString('base64')}`],
    ['a well-formed secret with a bad checksum', basic(`ectl_pat_t1.${'A'.repeat(43)}.AAAAAA`).Authorization],
    ['nothing after Basic', 'Basic'],
    ['binary junk', `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x00]).toString('base64')}`],
    ['a very long value', `Basic ${'A'.repeat(5000)}`],
  ])('refuses %s with 401, never 500', async (_, header) => {
    const response = await tree({ Authorization: header })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('Basic')
  })
})
