// Personal access tokens over HTTP: issue (and its validation), use through Basic, scope
// intersected with the owner's current responsibilities, revoke, regenerate, expiry, the
// full-access fallback and its automatic disabling, legacy rows, cross-tenant attempts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { crc32 } from 'node:zlib'
import type pg from 'pg'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { announced, basic, cli, eventually, FIXTURE_PLUGINS, tenantPool, tokens } from './helpers.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1' }
const OTHER = { username: 'other', password: 'other-password-1' }
let server: TestServer
let pool: pg.Pool
let tenant: string
const responsibility: Record<string, string> = {}
const bearer: Record<string, string> = {}

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: FIXTURE_PLUGINS, tenants: ['t1', 't2'], users: [ADMIN, CLERK, OTHER] })
  tenant = server.tenants[0]
  pool = tenantPool(server)
  for (const { Guid, Name } of (await pool.query(`select "Guid", "Name" from "Responsibility"`)).rows) responsibility[Name] = Guid
  for (const args of [
    ['role', 'add', 'Readers'],
    ['role', 'grant', 'Readers', 'ReadRoles'],
    ['role', 'grant', 'Readers', 'ReadNotes'],
    ['user', 'grant-role', '--username', CLERK.username, '--role', 'Readers'],
  ]) {
    const run = await cli(server.configPath, ...args, '--tenant', tenant)
    expect(run.code, run.stderr).toBe(0)
  }
  bearer.clerk = (await tokens(server, CLERK.username, CLERK.password)).accessToken
  bearer.admin = (await tokens(server)).accessToken
  bearer.other = (await tokens(server, OTHER.username, OTHER.password)).accessToken
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

const create = (who: string, body: unknown) => call(`${server.api}/user/pats`, { method: 'POST', token: bearer[who], body })
const list = (who: string) => call(`${server.api}/user/pats`, { token: bearer[who] })
const action = (who: string, id: string, verb: 'revoke' | 'regenerate') =>
  call(`${server.api}/user/pats/${id}/${verb}`, { method: 'POST', token: bearer[who] })
const tree = (secret: string) => call(`${server.api}/roles/tree`, { headers: basic(secret) })

async function issue(who: string, names: string[], name = 'script') {
  const response = await create(who, { name, expirationDays: 30, responsibilityIds: names.map((n) => responsibility[n]) })
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; secret: string; status: string; isFullAccessFallback: boolean }
}

describe('issuing', () => {
  it('answers the item and the secret once; the list never shows a secret', async () => {
    const response = await create('clerk', { name: 'nightly export', expirationDays: 7, responsibilityIds: [responsibility.ReadRoles.toUpperCase()] })
    expect(response.status).toBe(200)
    const item = response.body
    expect(Object.keys(item).sort()).toEqual(
      ['createdAt', 'expiresAt', 'id', 'isFullAccessFallback', 'lastUsedAt', 'name', 'responsibilityIds', 'secret', 'status'],
    )
    expect(item).toMatchObject({ name: 'nightly export', status: 'active', isFullAccessFallback: false, lastUsedAt: null })
    expect(item.responsibilityIds).toEqual([responsibility.ReadRoles])
    expect(item.secret).toMatch(new RegExp(`^ectl_pat_${tenant}\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{6}$`))
    expect((Date.parse(item.expiresAt) - Date.parse(item.createdAt)) / 86_400_000).toBeCloseTo(7, 3)
    const listed = (await list('clerk')).body.find((p: { id: string }) => p.id === item.id)
    expect(listed).toBeDefined()
    expect(listed.secret).toBeUndefined()
    const stored = await pool.query(`select "SecretHash" from "_Pat" where "Id" = $1`, [item.id])
    expect(stored.rows[0].SecretHash.toString()).not.toContain(item.secret.slice(15, 40))
  })

  it.each([
    ['expirationDays 0', { name: 'x', expirationDays: 0, responsibilityIds: [] }, 'expirationDays'],
    ['expirationDays 366', { name: 'x', expirationDays: 366, responsibilityIds: [] }, 'expirationDays'],
    ['expirationDays 1.5', { name: 'x', expirationDays: 1.5, responsibilityIds: [] }, 'expirationDays'],
    ['expirationDays as text', { name: 'x', expirationDays: '7', responsibilityIds: [] }, 'expirationDays'],
    ['no name', { expirationDays: 7, responsibilityIds: [] }, 'name'],
    ['responsibilityIds not an array', { name: 'x', expirationDays: 7, responsibilityIds: 'ReadRoles' }, 'responsibilityIds'],
    ['a responsibility id that is not a Guid', { name: 'x', expirationDays: 7, responsibilityIds: ['ReadRoles'] }, 'responsibilityIds'],
  ])('refuses %s with 400 naming the field', async (_, body, target) => {
    const response = await create('clerk', body)
    expect(response.status).toBe(400)
    expect(response.body.error.details.map((d: { target: string }) => d.target)).toContain(target)
  })

  it('refuses responsibilities the owner does not hold now', async () => {
    const response = await create('clerk', { name: 'x', expirationDays: 7, responsibilityIds: [responsibility.ReadRoles, responsibility.WriteNotes] })
    expect(response.status).toBe(400)
    expect(response.body.error.details).toEqual([
      { code: 'InvalidValue', target: 'responsibilityIds', message: `you do not hold responsibility ${responsibility.WriteNotes} now` },
    ])
  })

  it('refuses an empty list unless the fallback conditions hold, explaining them', async () => {
    const response = await create('clerk', { name: 'x', expirationDays: 7, responsibilityIds: [] })
    expect(response.status).toBe(400)
    expect(response.body.error.message).toContain('full-access fallback, allowed only to a user with full access and no roles (you do not have full access)')
  })

  it('is refused to a PAT (403): only an interactive sign-in manages PATs', async () => {
    const { secret, id } = await issue('clerk', ['ReadRoles'])
    const headers = basic(secret)
    expect((await call(`${server.api}/user/pats`, { headers })).status).toBe(403)
    expect((await call(`${server.api}/user/pats`, { method: 'POST', headers, body: { name: 'x', expirationDays: 1, responsibilityIds: [] } })).status).toBe(403)
    expect((await call(`${server.api}/user/pats/${id}/revoke`, { method: 'POST', headers })).status).toBe(403)
  })
})

describe('using', () => {
  it('grants the PAT’s responsibilities: the role tree with ReadRoles, not with ReadNotes alone', async () => {
    expect((await tree((await issue('clerk', ['ReadRoles'])).secret)).status).toBe(200)
    const notesOnly = await tree((await issue('clerk', ['ReadNotes'])).secret)
    expect(notesOnly.status).toBe(403)
  })

  it('intersects with the owner’s current responsibilities at each request', async () => {
    const { secret } = await issue('clerk', ['ReadRoles'])
    expect((await tree(secret)).status).toBe(200)
    expect((await cli(server.configPath, 'role', 'revoke', 'Readers', 'ReadRoles', '--tenant', tenant)).code).toBe(0)
    try {
      await eventually(async () => expect((await tree(secret)).status).toBe(403), 1_000)
    } finally {
      expect((await cli(server.configPath, 'role', 'grant', 'Readers', 'ReadRoles', '--tenant', tenant)).code).toBe(0)
    }
    await eventually(async () => expect((await tree(secret)).status).toBe(200), 1_000)
  })

  it('records when a PAT was last used', async () => {
    const { secret, id } = await issue('clerk', ['ReadRoles'])
    await tree(secret)
    const listed = (await list('clerk')).body.find((p: { id: string }) => p.id === id)
    expect(Date.now() - Date.parse(listed.lastUsedAt)).toBeLessThan(10_000)
  })

  it('refuses an expired PAT with 401 and lists it as expired', async () => {
    const { secret, id } = await issue('clerk', ['ReadRoles'])
    expect((await tree(secret)).status).toBe(200)
    await pool.query(`update "_Pat" set "ExpiresAt" = now() - interval '1 second' where "Id" = $1`, [id])
    await announced(server)
    await eventually(async () => expect((await tree(secret)).status).toBe(401), 1_000)
    expect((await list('clerk')).body.find((p: { id: string }) => p.id === id).status).toBe('expired')
  })

  it('gives a legacy PAT without responsibilities, not a fallback, no access: authenticated, every check 403', async () => {
    const { secret, id } = await issue('clerk', ['ReadRoles'])
    await pool.query(`delete from "_PatResponsibility" where "PatId" = $1`, [id])
    await announced(server)
    await eventually(async () => expect((await tree(secret)).status).toBe(403), 1_000)
  })

  it('keeps tenants apart: a PAT secret moved to another tenant is 401', async () => {
    const { secret } = await issue('clerk', ['ReadRoles'])
    const other = server.tenants[1]
    const naive = secret.replace(`ectl_pat_${tenant}.`, `ectl_pat_${other}.`)
    expect((await tree(naive)).status).toBe(401)
    // Even with a valid checksum for the other tenant, t2 has no such hash.
    const body = naive.slice(0, naive.lastIndexOf('.'))
    const sum = Buffer.alloc(4)
    sum.writeUInt32BE(crc32(body))
    expect((await tree(`${body}.${sum.toString('base64url')}`)).status).toBe(401)
  })
})

describe('revoke and regenerate', () => {
  it('revokes: refused at once, listed as revoked, revoking again changes nothing', async () => {
    const { secret, id } = await issue('clerk', ['ReadRoles'])
    expect((await tree(secret)).status).toBe(200)
    const revoked = await action('clerk', id, 'revoke')
    expect(revoked.status).toBe(200)
    expect(revoked.body).toMatchObject({ id, status: 'revoked' })
    expect(revoked.body.secret).toBeUndefined()
    const refused = await tree(secret)
    expect(refused.status).toBe(401)
    expect(refused.body.error.message).toContain('revoked')
    expect((await action('clerk', id, 'revoke')).body.status).toBe('revoked')
    expect((await action('clerk', id, 'regenerate')).status).toBe(409)
  })

  it('regenerates: the old secret stops at once, the new one works, the lifetime restarts', async () => {
    const { secret, id } = await issue('clerk', ['ReadRoles'])
    expect((await tree(secret)).status).toBe(200)
    await pool.query(`update "_Pat" set "ExpiresAt" = now() + interval '1 day' where "Id" = $1`, [id])
    const regenerated = await action('clerk', id, 'regenerate')
    expect(regenerated.status).toBe(200)
    expect(regenerated.body.id).toBe(id)
    expect(regenerated.body.secret).not.toBe(secret)
    expect((Date.parse(regenerated.body.expiresAt) - Date.now()) / 86_400_000).toBeCloseTo(30, 1)
    expect((await tree(secret)).status).toBe(401)
    expect((await tree(regenerated.body.secret)).status).toBe(200)
  })

  it('lets users see and change only their own PATs', async () => {
    const { id } = await issue('clerk', ['ReadRoles'])
    expect((await list('other')).body).toEqual([])
    expect((await action('other', id, 'revoke')).status).toBe(404)
    expect((await action('other', id, 'regenerate')).status).toBe(404)
    expect((await action('clerk', 'not-a-guid', 'revoke')).status).toBe(404)
    expect((await list('clerk')).body.find((p: { id: string }) => p.id === id).status).toBe('active')
  })
})

describe('full-access fallback', () => {
  const adminCli = (...args: string[]) => cli(server.configPath, ...args, '--tenant', tenant, '--username', ADMIN.username)

  it('is not issued for a misspelt responsibilityIds: the unknown field is a 400, not an empty scope', async () => {
    const before = (await list('admin')).body.length
    const response = await create('admin', { name: 'typo', expirationDays: 7, responsibilities: [responsibility.ReadNotes] })
    expect(response.status).toBe(400)
    expect(response.body.error.details).toEqual([
      { code: 'InvalidValue', target: 'responsibilities', message: 'Unknown field "responsibilities": the body has the fields name, expirationDays, responsibilityIds' },
      { code: 'InvalidValue', target: 'responsibilityIds', message: expect.stringContaining('responsibilityIds is required') },
    ])
    expect((await list('admin')).body).toHaveLength(before)
    // Left out, it would be the same empty scope: required, as the contract says.
    const omitted = await create('admin', { name: 'no scope', expirationDays: 7 })
    expect([omitted.status, omitted.body.error.details]).toEqual([400, [{ code: 'InvalidValue', target: 'responsibilityIds', message: expect.stringContaining('responsibilityIds is required') }]])
    expect((await list('admin')).body).toHaveLength(before)
  })

  it('is issued with an empty list to a full-access user without roles, and grants full access', async () => {
    const fallback = await issue('admin', [], 'fallback')
    expect(fallback.isFullAccessFallback).toBe(true)
    expect((await tree(fallback.secret)).status).toBe(200)
  })

  it('lets a full-access user issue a scoped PAT, limited to its responsibilities', async () => {
    const scoped = await issue('admin', ['ReadNotes'])
    expect(scoped.isFullAccessFallback).toBe(false)
    expect((await tree(scoped.secret)).status).toBe(403)
  })

  it('is disabled for good when the owner gains a role', async () => {
    const fallback = await issue('admin', [], 'fallback')
    expect((await adminCli('user', 'grant-role', '--role', 'Readers')).code).toBe(0)
    try {
      await eventually(async () => expect((await tree(fallback.secret)).status).toBe(401), 1_000)
      expect((await list('admin')).body.find((p: { id: string }) => p.id === fallback.id).status).toBe('disabled')
      expect((await create('admin', { name: 'x', expirationDays: 1, responsibilityIds: [] })).body.error.message).toContain('you have 1 role(s)')
    } finally {
      expect((await adminCli('user', 'revoke-role', '--role', 'Readers')).code).toBe(0)
    }
    // The CLI returns once every instance has heard the change: the role gone, the PAT stays disabled.
    expect((await tree(fallback.secret)).status).toBe(401)
    expect((await action('admin', fallback.id, 'regenerate')).status).toBe(409)
  })

  it('is disabled for good when the owner loses full access', async () => {
    const fallback = await issue('admin', [], 'fallback')
    expect((await adminCli('user', 'full-access', 'off')).code).toBe(0)
    expect((await adminCli('user', 'full-access', 'on')).code).toBe(0)
    await eventually(async () => expect((await tree(fallback.secret)).status).toBe(401), 1_000)
    expect((await list('admin')).body.find((p: { id: string }) => p.id === fallback.id).status).toBe('disabled')
  })

  it('is disabled at use too, when the change bypassed the trigger', async () => {
    const fallback = await issue('admin', [], 'fallback')
    expect((await tree(fallback.secret)).status).toBe(200)
    const client = await pool.connect()
    try {
      await client.query('begin')
      await client.query(`alter table "UserRole" disable trigger "_disable_fallback_pats"`)
      await client.query(
        `insert into "UserRole" ("Guid", "User_Guid", "Role_Guid", "_Version")
         select gen_random_uuid(), u."Guid", r."Guid", 1 from "User" u, "Role" r where u."Username" = $1 and r."Name" = 'Readers'`,
        [ADMIN.username],
      )
      await client.query(`alter table "UserRole" enable trigger "_disable_fallback_pats"`)
      await client.query('commit')
    } finally {
      client.release()
    }
    await announced(server)
    try {
      await eventually(async () => expect((await tree(fallback.secret)).status).toBe(401), 1_000)
      const { rows } = await pool.query(`select "DisabledAt" from "_Pat" where "Id" = $1`, [fallback.id])
      expect(rows[0].DisabledAt).not.toBeNull()
    } finally {
      expect((await adminCli('user', 'revoke-role', '--role', 'Readers')).code).toBe(0)
    }
  })
})
