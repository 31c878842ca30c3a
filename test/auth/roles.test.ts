// Roles: the tree endpoint, the cycle and delete rules, inheritance through the hierarchy,
// and the role cache (invalidated by assignment changes, expiring after its lifetime).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'
import { AccessService } from '../../server/auth/access-service.ts'
import { checkRoleDeletable, checkRoleParent } from '../../server/auth/role-rules.ts'
import { addRole, grantResponsibility, grantRole, revokeResponsibility, revokeRole, setRoleParent } from '../../server/auth/role-admin.ts'
import { ServiceError } from '../../server/errors.ts'
import { plainSql } from '../../server/persistence/sql.ts'
import { ADMIN, call, startTestServer, TEST_DATABASE_URL, type TestServer } from '../support/test-server.ts'
import { cli, eventually, FIXTURE_PLUGINS, tokens } from './helpers.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1' }
let server: TestServer
let registry: TenantRegistry
let db: TenantDatabase
const guid: Record<string, string> = {}

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: FIXTURE_PLUGINS, users: [ADMIN, CLERK] })
  const config = loadConfig(server.configPath, {})
  registry = new TenantRegistry(config, await loadModel(FIXTURE_PLUGINS), TEST_DATABASE_URL)
  db = (await registry.get(server.tenants[0]))!
  // Sales ─┬─ Clerks
  //        └─ Managers ── Seniors        Admins (a second root)
  for (const [name, parent] of [['Sales'], ['Managers', 'Sales'], ['Clerks', 'Sales'], ['Seniors', 'Managers'], ['Admins']]) {
    guid[name!] = (await addRole(db, name!, { parent })).guid
  }
})
afterAll(async () => {
  await registry?.close()
  await server?.stop()
})

describe('GET /api/roles/tree', () => {
  it('answers every role once, under its parent, roots first, siblings by name', async () => {
    const { accessToken } = await tokens(server)
    const response = await call(`${server.api}/roles/tree`, { token: accessToken })
    expect(response.status).toBe(200)
    const node = (name: string, children: unknown[] = []) => ({ Guid: guid[name], Name: name, Children: children })
    expect(response.body).toEqual([node('Admins'), node('Sales', [node('Clerks'), node('Managers', [node('Seniors')])])])
    expect((await call(`${server.url}/API/Roles/Tree`, { token: accessToken })).status).toBe(200)
  })

  it('is 403 without read permission on Role', async () => {
    const { accessToken } = await tokens(server, CLERK.username, CLERK.password)
    const response = await call(`${server.api}/roles/tree`, { token: accessToken })
    expect(response.status).toBe(403)
    expect(response.body.error.code).toBe('Forbidden')
  })

  it('uses lower camel case names when ApiOptions:EnableLowerCamelCase is on', async () => {
    const camel = await startTestServer({ config: { ApiOptions: { EnableLowerCamelCase: true } } })
    try {
      expect((await cli(camel.configPath, 'role', 'add', 'Top', '--tenant', camel.tenants[0])).code).toBe(0)
      expect((await cli(camel.configPath, 'role', 'add', 'Below', '--tenant', camel.tenants[0], '--parent', 'Top')).code).toBe(0)
      const response = await call(`${camel.api}/roles/tree`, { token: await camel.token() })
      expect(response.body).toEqual([{ guid: expect.any(String), name: 'Top', children: [{ guid: expect.any(String), name: 'Below', children: [] }] }])
    } finally {
      await camel.stop()
    }
  })
})

describe('role rules', () => {
  const failure = async (work: Promise<unknown>) => {
    try {
      await work
    } catch (error) {
      return error as ServiceError
    }
    throw new Error('expected a ServiceError')
  }

  it('rejects a parent that is the role itself or one of its descendants with 400 RoleCycle', async () => {
    const sql = plainSql(db.pool)
    const self = await failure(checkRoleParent(sql, guid.Sales, guid.Sales))
    expect(self).toBeInstanceOf(ServiceError)
    expect([self.status, self.code]).toEqual([400, 'RoleCycle'])
    const deep = await failure(checkRoleParent(sql, guid.Sales, guid.Seniors))
    expect(deep.code).toBe('RoleCycle')
    expect(deep.message).toContain("'Sales' → 'Managers' → 'Seniors' → 'Sales'")
    expect(deep.target).toBe('Parent')
  })

  it('accepts a parent outside the role’s subtree, and no parent at all', async () => {
    const sql = plainSql(db.pool)
    await checkRoleParent(sql, guid.Seniors, guid.Clerks)
    await checkRoleParent(sql, guid.Sales, guid.Admins)
    await checkRoleParent(sql, guid.Sales, null)
  })

  it('judges changes of the same flush together (pendingParents)', async () => {
    const sql = plainSql(db.pool)
    // Seniors moving under Admins at the same time makes Managers under Seniors fine…
    await checkRoleParent(sql, guid.Managers, guid.Seniors, new Map([[guid.Seniors, guid.Admins]]))
    // …and Admins under Seniors a cycle once Seniors is under Admins.
    expect((await failure(checkRoleParent(sql, guid.Admins, guid.Seniors, new Map([[guid.Seniors, guid.Admins]])))).code).toBe('RoleCycle')
  })

  it('refuses to delete a role with children with 409 RoleHasChildren, naming them', async () => {
    const sql = plainSql(db.pool)
    const error = await failure(checkRoleDeletable(sql, guid.Sales))
    expect([error.status, error.code]).toEqual([409, 'RoleHasChildren'])
    expect(error.message).toContain("'Clerks', 'Managers'")
    await checkRoleDeletable(sql, guid.Seniors)
    await checkRoleDeletable(sql, guid.Managers, new Set([guid.Seniors]))
  })

  it('applies both rules to CLI changes, with a one-line reason and a non-zero exit', async () => {
    const cycle = await cli(server.configPath, 'role', 'set-parent', 'Sales', 'Seniors', '--tenant', server.tenants[0])
    expect(cycle.code).toBe(1)
    expect(cycle.stderr).toMatch(/^entityctl: Role 'Sales' cannot have 'Seniors' as its parent/)
    expect(cycle.stderr.trim().split('\n')).toHaveLength(1)
    const remove = await cli(server.configPath, 'role', 'remove', 'Managers', '--tenant', server.tenants[0])
    expect(remove.code).toBe(1)
    expect(remove.stderr).toContain("Role 'Managers' has 1 child role(s) ('Seniors')")
  })
})

describe('concurrent changes of the tree', () => {
  /** Roles whose walk up the parents comes back to themselves. */
  async function rolesInCycles(): Promise<string[]> {
    const { rows } = await db.pool.query<{ Guid: string; Parent_Guid: string | null }>('select "Guid", "Parent_Guid" from "Role"')
    const parentOf = new Map(rows.map((r) => [r.Guid, r.Parent_Guid]))
    return rows
      .filter((role) => {
        let current = parentOf.get(role.Guid)
        for (let steps = 0; current && steps <= rows.length; steps++, current = parentOf.get(current)) if (current === role.Guid) return true
        return false
      })
      .map((r) => r.Guid)
  }

  it('never makes a cycle of two roles re-parented under each other at the same time, over HTTP', async () => {
    const { accessToken } = await tokens(server)
    const pairs = await Promise.all(Array.from({ length: 15 }, async (_, i) => [(await addRole(db, `RaceX${i}`)).guid, (await addRole(db, `RaceY${i}`)).guid] as const))
    const parent = (role: string, to: string) => call(`${server.api}/Roles(${role})`, { method: 'PATCH', token: accessToken, body: { ParentGuid: to } })
    for (const [x, y] of pairs) {
      const answers = await Promise.all([parent(x, y), parent(y, x)])
      // One wins; the other now closes a cycle.
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join(' ')).toEqual([204, 400])
      expect(answers.find((a) => a.status === 400)!.body.error.code).toBe('RoleCycle')
    }
    expect(await rolesInCycles()).toEqual([])
  })

  it('never makes a cycle through the admin commands either (role set-parent)', async () => {
    for (let i = 0; i < 10; i++) {
      const [x, y] = [`SetX${i}`, `SetY${i}`]
      await addRole(db, x)
      await addRole(db, y)
      const results = await Promise.allSettled([setRoleParent(db, x, y), setRoleParent(db, y, x)])
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    }
    expect(await rolesInCycles()).toEqual([])
  })
})

describe('access through the hierarchy', () => {
  it('gives a supervisor role the responsibilities of its grandchild role, and a user of it access at once', async () => {
    await grantResponsibility(db, 'Seniors', 'ReadRoles')
    const { accessToken } = await tokens(server, CLERK.username, CLERK.password)
    const tree = () => call(`${server.api}/roles/tree`, { token: accessToken })
    expect((await tree()).status).toBe(403)
    await grantRole(db, CLERK.username, 'Sales')
    await eventually(async () => expect((await tree()).status).toBe(200), 1_000)
    await revokeRole(db, CLERK.username, 'Sales')
    await eventually(async () => expect((await tree()).status).toBe(403), 1_000)
    // A sibling branch does not. Clerks carries ReadNotes, so the notes turning readable shows
    // the server has heard of the new role before the tree is asked again.
    await grantResponsibility(db, 'Clerks', 'ReadNotes')
    await grantRole(db, CLERK.username, 'Clerks')
    await eventually(async () => expect((await call(`${server.api}/Notes`, { token: accessToken })).status).toBe(200), 1_000)
    expect((await tree()).status).toBe(403)
    await revokeRole(db, CLERK.username, 'Clerks')
    await revokeResponsibility(db, 'Clerks', 'ReadNotes')
  })

  it('resolves roles, responsibilities and permissions through any depth, with a recursive query', async () => {
    const access = accessService(5)
    try {
      await grantRole(db, CLERK.username, 'Sales')
      const clerk = await userGuid(CLERK.username)
      const user = (await access.forUser(db, clerk))!
      expect(user.roleCount).toBe(1)
      expect([...user.context.responsibilities]).toEqual(['ReadRoles'])
      expect([...user.context.permissions.get('Role')!]).toEqual(['read'])
      expect(user.context.fullAccess).toBe(false)
      await revokeRole(db, CLERK.username, 'Sales')
    } finally {
      await access.close()
    }
  })
})

describe('role cache', () => {
  it('keeps a user’s access for RoleCacheExpirationMinutes, then loads it again', async () => {
    // The service's clock, moved by the test: the entry's age is what the test says, however slow the machine.
    let now = Date.now()
    const access = accessService(0.005, () => now) // 300 ms
    try {
      const clerk = await userGuid(CLERK.username)
      const first = await access.forUser(db, clerk)
      now += 299
      expect(await access.forUser(db, clerk)).toBe(first)
      now += 1
      const second = await access.forUser(db, clerk)
      expect(second).not.toBe(first)
      expect(second).toEqual(first)
      expect(await access.forUser(db, clerk)).toBe(second)
    } finally {
      await access.close()
    }
  })

  it('caches nothing when RoleCacheExpirationMinutes is 0', async () => {
    const access = accessService(0)
    try {
      const clerk = await userGuid(CLERK.username)
      expect(await access.forUser(db, clerk)).not.toBe(await access.forUser(db, clerk))
    } finally {
      await access.close()
    }
  })

  it('drops a user’s access when an assignment changes: at once by invalidateTenant, and by NOTIFY from anywhere', async () => {
    const access = accessService(60)
    try {
      const clerk = await userGuid(CLERK.username)
      const before = (await access.forUser(db, clerk))!
      expect(before.roleCount).toBe(0)
      await grantRole(db, CLERK.username, 'Managers')
      access.invalidateTenant(db.tenant)
      expect((await access.forUser(db, clerk))!.roleCount).toBe(1)
      // A change this AccessService was not told about (another process) arrives by NOTIFY.
      await setRoleParent(db, 'Seniors', 'Clerks')
      await eventually(async () => expect((await access.forUser(db, clerk))!.responsibilities.size).toBe(0), 1_000)
      await setRoleParent(db, 'Seniors', 'Managers')
      await eventually(async () => expect([...(await access.forUser(db, clerk))!.responsibilities.values()]).toEqual(['ReadRoles']), 1_000)
      await revokeRole(db, CLERK.username, 'Managers')
      await eventually(async () => expect((await access.forUser(db, clerk))!.roleCount).toBe(0), 1_000)
    } finally {
      await access.close()
    }
  })
})

function accessService(roleCacheMinutes: number, clock?: () => number): AccessService {
  const config = loadConfig(server.configPath, { ApiOptions__RoleCacheExpirationMinutes: String(roleCacheMinutes) })
  return new AccessService({ config, model: registryModel, tenants: registry, logger: pino({ level: 'silent' }), clock })
}

let registryModel: Awaited<ReturnType<typeof loadModel>>
beforeAll(async () => {
  registryModel = await loadModel(FIXTURE_PLUGINS)
})

async function userGuid(username: string): Promise<string> {
  const { rows } = await db.pool.query(`select "Guid" from "User" where "Username" = $1`, [username])
  return rows[0].Guid
}
