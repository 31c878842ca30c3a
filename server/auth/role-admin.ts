// Roles and their assignments for the CLI: add, re-parent, grant and revoke responsibilities,
// remove; and a user's roles, full access and disabled flag. Every write goes through the
// tenant's MikroORM session (so the rules engine sees it) and the tables' triggers announce
// it to every server instance (persistence/internal-tables.ts), which drop cached access.

import type { EntityManager } from '@mikro-orm/postgresql'
import { ServiceError } from '../errors.ts'
import { newGuid } from '../persistence/guid.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { announceAccessChange } from './access-listener.ts'
import { checkRoleDeletable, checkRoleParent } from './role-rules.ts'
import { UserAdminError } from './user-admin.ts'
import { byName, type EntityRecord as Row } from '../persistence/entity-name.ts'

export interface RoleSummary {
  readonly guid: string
  readonly name: string
  readonly parent: string | null
  readonly description: string | null
  readonly responsibilities: readonly string[]
  readonly users: number
}


export async function addRole(
  db: TenantDatabase,
  name: string,
  options: { parent?: string; description?: string } = {},
): Promise<RoleSummary> {
  const trimmed = name.trim()
  if (!trimmed) throw new UserAdminError('A role name is required.')
  return write(db, async (em) => {
    if (await em.findOne(byName('Role'), { Name: trimmed })) throw new UserAdminError(`Role '${trimmed}' already exists in tenant '${db.tenant}'.`)
    const parent = options.parent ? await roleNamed(em, db, options.parent) : undefined
    em.create(byName('Role'), {
      Guid: newGuid(),
      Name: trimmed,
      Title: trimmed,
      Description: options.description ?? null,
      Parent: parent?.Guid ?? null,
    })
    await em.flush()
    return trimmed
  }).then((role) => roleSummary(db, role))
}

/** `parent` undefined or null: the role becomes a root. */
export async function setRoleParent(db: TenantDatabase, roleName: string, parentName: string | null): Promise<RoleSummary> {
  await write(db, async (em) => {
    const role = await roleNamed(em, db, roleName)
    const parent = parentName ? await roleNamed(em, db, parentName) : null
    await checkRoleParent(em, role.Guid, parent?.Guid ?? null)
    em.assign(role, { Parent: parent?.Guid ?? null } as never)
    await em.flush()
  })
  return roleSummary(db, roleName)
}

export async function grantResponsibility(db: TenantDatabase, roleName: string, responsibilityName: string): Promise<RoleSummary> {
  await write(db, async (em) => {
    const role = await roleNamed(em, db, roleName)
    const responsibility = await responsibilityNamed(em, db, responsibilityName)
    if (await em.findOne(byName('RoleResponsibility'), { Role: role.Guid, Responsibility: responsibility.Guid })) return
    em.create(byName('RoleResponsibility'), { Guid: newGuid(), Role: role.Guid, Responsibility: responsibility.Guid })
    await em.flush()
  })
  return roleSummary(db, roleName)
}

export async function revokeResponsibility(db: TenantDatabase, roleName: string, responsibilityName: string): Promise<RoleSummary> {
  await write(db, async (em) => {
    const role = await roleNamed(em, db, roleName)
    const responsibility = await responsibilityNamed(em, db, responsibilityName)
    const link = await em.findOne(byName('RoleResponsibility'), { Role: role.Guid, Responsibility: responsibility.Guid })
    if (!link) throw new UserAdminError(`Role '${role.Name}' does not have responsibility '${responsibility.Name}'.`)
    em.remove(link)
    await em.flush()
  })
  return roleSummary(db, roleName)
}

export async function removeRole(db: TenantDatabase, roleName: string): Promise<void> {
  await write(db, async (em) => {
    const role = await roleNamed(em, db, roleName)
    await checkRoleDeletable(em, role.Guid)
    em.remove(role)
    await em.flush()
  })
}

export async function listRoles(db: TenantDatabase): Promise<RoleSummary[]> {
  const { rows } = await db.pool.query(
    `select r."Guid" as guid, r."Name" as name, p."Name" as parent, r."Description" as description,
            coalesce((select array_agg(s."Name" order by s."Name") from "RoleResponsibility" rr
                        join "Responsibility" s on s."Guid" = rr."Responsibility_Guid" where rr."Role_Guid" = r."Guid"), '{}') as responsibilities,
            (select count(*)::int from "UserRole" ur where ur."Role_Guid" = r."Guid") as users
       from "Role" r left join "Role" p on p."Guid" = r."Parent_Guid"
      order by r."Name"`,
  )
  return rows
}

export async function grantRole(db: TenantDatabase, username: string, roleName: string): Promise<void> {
  await write(db, async (em) => {
    const user = await userNamed(em, db, username)
    const role = await roleNamed(em, db, roleName)
    if (await em.findOne(byName('UserRole'), { User: user.Guid, Role: role.Guid })) return
    em.create(byName('UserRole'), { Guid: newGuid(), User: user.Guid, Role: role.Guid })
    await em.flush()
  })
}

export async function revokeRole(db: TenantDatabase, username: string, roleName: string): Promise<void> {
  await write(db, async (em) => {
    const user = await userNamed(em, db, username)
    const role = await roleNamed(em, db, roleName)
    const link = await em.findOne(byName('UserRole'), { User: user.Guid, Role: role.Guid })
    if (!link) throw new UserAdminError(`User '${user.Username}' does not have role '${role.Name}'.`)
    em.remove(link)
    await em.flush()
  })
}

/** Sets HasFullAccess or Disabled of a user. */
export async function setUserFlag(db: TenantDatabase, username: string, flag: 'HasFullAccess' | 'Disabled', value: boolean): Promise<void> {
  await write(db, async (em) => {
    const user = await userNamed(em, db, username)
    em.assign(user, { [flag]: value } as never)
    await em.flush()
  })
}

async function roleSummary(db: TenantDatabase, name: string): Promise<RoleSummary> {
  const roles = await listRoles(db)
  return roles.find((r) => r.name === name.trim())!
}

/**
 * One session, one transaction; a rule's ServiceError becomes the admin's one-line reason.
 * Once committed, waits until every running server has heard of the change.
 */
async function write<T>(db: TenantDatabase, work: (em: EntityManager) => Promise<T>): Promise<T> {
  try {
    const result = await db.fork().transactional(work)
    await announceAccessChange(db.url)
    return result
  } catch (error) {
    if (error instanceof ServiceError) throw new UserAdminError(error.message)
    throw error
  }
}

async function roleNamed(em: EntityManager, db: TenantDatabase, name: string): Promise<Row> {
  const role = await em.findOne(byName('Role'), { Name: name.trim() })
  if (!role) throw new UserAdminError(`No role '${name}' in tenant '${db.tenant}'; \`entityctl role list\` shows them.`)
  return role as Row
}

async function responsibilityNamed(em: EntityManager, db: TenantDatabase, name: string): Promise<Row> {
  const responsibility = await em.findOne(byName('Responsibility'), { Name: name.trim() })
  if (!responsibility) {
    throw new UserAdminError(
      `No responsibility '${name}' in tenant '${db.tenant}'; \`entityctl responsibility list\` shows them (plugins declare them; \`responsibility sync\` records them).`,
    )
  }
  return responsibility as Row
}

async function userNamed(em: EntityManager, db: TenantDatabase, username: string): Promise<Row> {
  const user = await em.findOne(byName('User'), { Username: username.trim() })
  if (!user) throw new UserAdminError(`No user '${username}' in tenant '${db.tenant}'.`)
  return user as Row
}
