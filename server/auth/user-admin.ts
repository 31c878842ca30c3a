// Users for the CLI and install.sh: create, list, set password. Users are entities (the
// User set), so they pass the same write path and rules as any other; the password hash
// lives beside them in _Credential.

import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { checkPasswordStrength, hashPassword } from './passwords.ts'
import { openUnit } from '../persistence/session.ts'
import { inTransaction, plainSql } from '../persistence/sql.ts'
import { quotedName } from '../model/control-characters.ts'

export class UserAdminError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UserAdminError'
  }
}

export interface UserSummary {
  readonly guid: string
  readonly username: string
  readonly hasFullAccess: boolean
  readonly disabled: boolean
  readonly roles: readonly string[]
}

export async function addUser(db: TenantDatabase, username: string, password: string, fullAccess: boolean): Promise<UserSummary> {
  const strength = checkPasswordStrength(password)
  if (strength !== true) throw new UserAdminError(`Password rejected: ${strength}.`)
  if (!username || username.trim().length === 0) throw new UserAdminError('A username is required.')
  const passwordHash = await hashPassword(password)
  const existing = await db.pool.query('select 1 from "User" where "Username" = $1', [username.trim()])
  if (existing.rowCount) throw new UserAdminError(`User ${quotedName(username.trim())} already exists in tenant '${db.tenant}'.`)
  // The user and its credential in one transaction: a user never exists without a password.
  const guid = await inTransaction(db.pool, async (client) => {
    const sql = plainSql(client)
    const unit = openUnit(db, sql)
    const user = unit.create(db.model.entities.get('User')!)
    Object.assign(user.values, { Username: username.trim(), HasFullAccess: fullAccess, Disabled: false, Title: username.trim() })
    await unit.flush()
    await sql('insert into "_Credential" ("UserGuid", "PasswordHash") values ($1, $2)', [user.key, passwordHash])
    return user.key
  })
  return { guid, username: username.trim(), hasFullAccess: fullAccess, disabled: false, roles: [] }
}

export async function listUsers(db: TenantDatabase): Promise<UserSummary[]> {
  const { rows } = await db.pool.query(
    `select u."Guid", u."Username", coalesce(u."HasFullAccess", false) as "HasFullAccess", coalesce(u."Disabled", false) as "Disabled",
            coalesce(array_agg(r."Name" order by r."Name") filter (where r."Name" is not null), '{}') as "Roles"
       from "User" u left join "UserRole" ur on ur."User_Guid" = u."Guid" left join "Role" r on r."Guid" = ur."Role_Guid"
      group by u."Guid" order by u."Username"`,
  )
  return rows.map((r) => ({ guid: r.Guid, username: r.Username, hasFullAccess: r.HasFullAccess, disabled: r.Disabled, roles: r.Roles }))
}

export async function setPassword(db: TenantDatabase, username: string, password: string): Promise<void> {
  const strength = checkPasswordStrength(password)
  if (strength !== true) throw new UserAdminError(`Password rejected: ${strength}.`)
  const hash = await hashPassword(password)
  // Plain SQL on the pool: _Credential and _RefreshToken are not entities.
  const updated = await db.pool.query(
    `insert into "_Credential" ("UserGuid", "PasswordHash", "UpdatedAt")
       select "Guid", $2, now() from "User" where "Username" = $1
     on conflict ("UserGuid") do update set "PasswordHash" = excluded."PasswordHash", "UpdatedAt" = now()`,
    [username, hash],
  )
  if (!updated.rowCount) throw new UserAdminError(`No user ${quotedName(username)} in tenant '${db.tenant}'.`)
  // A new password ends every session: outstanding refresh tokens are revoked.
  await db.pool.query(
    `update "_RefreshToken" set "RevokedAt" = now() where "RevokedAt" is null and "UserGuid" = (select "Guid" from "User" where "Username" = $1)`,
    [username],
  )
}
