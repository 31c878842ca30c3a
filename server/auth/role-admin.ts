// Roles and their assignments for the CLI: add, re-parent, grant and revoke responsibilities,
// remove; and a user's roles, full access and disabled flag. Every write goes through a
// unit of work (so the rules engine sees it) and the tables' triggers announce it to every
// server instance (persistence/internal-tables.ts), which drop cached access.

import { ServiceError } from '../errors.ts'
import { poolSession } from '../persistence/session.ts'
import type { Entry, UnitOfWork } from '../persistence/unit-of-work.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { announceAccessChange } from './access-listener.ts'
import { checkRoleDeletable, checkRoleParent } from './role-rules.ts'
import { UserAdminError } from './user-admin.ts'
import { quotedName } from '../model/control-characters.ts'

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
  await write(db, async (unit) => {
    if ((await unit.find(entity(unit, 'Role'), { Name: trimmed })).length > 0) throw new UserAdminError(`Role ${quotedName(trimmed)} already exists in tenant '${db.tenant}'.`)
    const parent = options.parent ? await roleNamed(unit, db, options.parent) : undefined
    Object.assign(unit.create(entity(unit, 'Role')).values, { Name: trimmed, Title: trimmed, Description: options.description ?? null, Parent: parent?.key ?? null })
  })
  return roleSummary(db, trimmed)
}

/** `parent` undefined or null: the role becomes a root. */
export async function setRoleParent(db: TenantDatabase, roleName: string, parentName: string | null): Promise<RoleSummary> {
  await write(db, async (unit) => {
    const role = await roleNamed(unit, db, roleName)
    const parent = parentName ? await roleNamed(unit, db, parentName) : null
    await checkRoleParent(unit.sql, role.key, parent?.key ?? null)
    role.values.Parent = parent?.key ?? null
  })
  return roleSummary(db, roleName)
}

export async function grantResponsibility(db: TenantDatabase, roleName: string, responsibilityName: string): Promise<RoleSummary> {
  await write(db, async (unit) => {
    const role = await roleNamed(unit, db, roleName)
    const responsibility = await responsibilityNamed(unit, db, responsibilityName)
    await link(unit, 'RoleResponsibility', { Role: role.key, Responsibility: responsibility.key })
  })
  return roleSummary(db, roleName)
}

export async function revokeResponsibility(db: TenantDatabase, roleName: string, responsibilityName: string): Promise<RoleSummary> {
  await write(db, async (unit) => {
    const role = await roleNamed(unit, db, roleName)
    const responsibility = await responsibilityNamed(unit, db, responsibilityName)
    await unlink(unit, 'RoleResponsibility', { Role: role.key, Responsibility: responsibility.key },
      `Role ${quotedName(String(role.values.Name))} does not have responsibility ${quotedName(String(responsibility.values.Name))}.`)
  })
  return roleSummary(db, roleName)
}

export async function removeRole(db: TenantDatabase, roleName: string): Promise<void> {
  await write(db, async (unit) => {
    const role = await roleNamed(unit, db, roleName)
    await checkRoleDeletable(unit.sql, role.key)
    unit.remove(role)
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
  await write(db, async (unit) => {
    const user = await userNamed(unit, db, username)
    const role = await roleNamed(unit, db, roleName)
    await link(unit, 'UserRole', { User: user.key, Role: role.key })
  })
}

export async function revokeRole(db: TenantDatabase, username: string, roleName: string): Promise<void> {
  await write(db, async (unit) => {
    const user = await userNamed(unit, db, username)
    const role = await roleNamed(unit, db, roleName)
    await unlink(unit, 'UserRole', { User: user.key, Role: role.key }, `User ${quotedName(String(user.values.Username))} does not have role ${quotedName(String(role.values.Name))}.`)
  })
}

/** Sets HasFullAccess or Disabled of a user. */
export async function setUserFlag(db: TenantDatabase, username: string, flag: 'HasFullAccess' | 'Disabled', value: boolean): Promise<void> {
  await write(db, async (unit) => {
    const user = await userNamed(unit, db, username)
    user.values[flag] = value
  })
}

async function roleSummary(db: TenantDatabase, name: string): Promise<RoleSummary> {
  const roles = await listRoles(db)
  return roles.find((r) => r.name === name.trim())!
}

/**
 * One unit of work, flushed as one statement; a rule's ServiceError becomes the admin's
 * one-line reason. Once written, waits until every running server has heard of the change.
 */
async function write<T>(db: TenantDatabase, work: (unit: UnitOfWork) => Promise<T>): Promise<T> {
  try {
    const result = await poolSession(db).write(work)
    await announceAccessChange(db.url)
    return result
  } catch (error) {
    if (error instanceof ServiceError) throw new UserAdminError(error.message)
    throw error
  }
}

function entity(unit: UnitOfWork, name: string) {
  return unit.model.entities.get(name)!
}

/** Creates the link row (UserRole, RoleResponsibility) unless it exists: granting twice is a no-op. */
async function link(unit: UnitOfWork, linkEntity: string, ends: Record<string, string>): Promise<void> {
  if ((await unit.find(entity(unit, linkEntity), ends)).length > 0) return
  Object.assign(unit.create(entity(unit, linkEntity)).values, ends)
}

/** Removes the link row; revoking what was never granted is the admin's mistake (`missing`). */
async function unlink(unit: UnitOfWork, linkEntity: string, ends: Record<string, string>, missing: string): Promise<void> {
  const [row] = await unit.find(entity(unit, linkEntity), ends)
  if (!row) throw new UserAdminError(missing)
  unit.remove(row)
}

async function roleNamed(unit: UnitOfWork, db: TenantDatabase, name: string): Promise<Entry> {
  const [role] = await unit.find(entity(unit, 'Role'), { Name: name.trim() })
  if (!role) throw new UserAdminError(`No role ${quotedName(name)} in tenant '${db.tenant}'; \`entityctl role list\` shows them.`)
  return role
}

async function responsibilityNamed(unit: UnitOfWork, db: TenantDatabase, name: string): Promise<Entry> {
  const [responsibility] = await unit.find(entity(unit, 'Responsibility'), { Name: name.trim() })
  if (!responsibility) {
    throw new UserAdminError(
      `No responsibility ${quotedName(name)} in tenant '${db.tenant}'; \`entityctl responsibility list\` shows them (plugins declare them; \`responsibility sync\` records them).`,
    )
  }
  return responsibility
}

async function userNamed(unit: UnitOfWork, db: TenantDatabase, username: string): Promise<Entry> {
  const [user] = await unit.find(entity(unit, 'User'), { Username: username.trim() })
  if (!user) throw new UserAdminError(`No user ${quotedName(username)} in tenant '${db.tenant}'.`)
  return user
}
