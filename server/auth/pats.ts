// Personal access tokens (specification 2.3, 3.2, 5.6–5.11; decisions.md "Personal access
// tokens"): issue, list, revoke, regenerate. The secret is shown once and stored as its hash;
// the scope is a list of responsibilities the owner held when it was issued, intersected
// with what the owner holds at each use (access-service.ts).
//
// Fallback PAT: no responsibilities, full access, allowed only while the owner has
// HasFullAccess and no role. Disabled for good when that ends (a trigger, and a check at use).
// A legacy row with no responsibilities that is not a fallback authenticates but is granted
// nothing: every permission check answers 403.

import type pg from 'pg'
import { RequestError, validationFailed, type ErrorDetail } from '../errors.ts'
import { GUID_PATTERN, newGuid } from '../persistence/guid.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { field, type Body } from './request-body.ts'
import { newSecret } from './secrets.ts'
import { epochMs, loadUserRow } from './access-queries.ts'
import { UserAdminError } from './user-admin.ts'
import { inTransaction } from '../persistence/sql.ts'
import { hasControlCharacter, noControlCharacters, quotedName } from '../model/control-characters.ts'

export type PatStatus = 'active' | 'revoked' | 'expired' | 'disabled'

export interface PatItem {
  readonly id: string
  readonly name: string
  readonly createdAt: string
  readonly expiresAt: string
  readonly lastUsedAt: string | null
  readonly responsibilityIds: string[]
  readonly isFullAccessFallback: boolean
  readonly status: PatStatus
}

export interface IssuedPat extends PatItem {
  /** Shown once, in this answer only. */
  readonly secret: string
}

export interface PatRequest {
  readonly name: string
  readonly expirationDays: number
  readonly responsibilityIds: readonly string[]
}

/** What PAT rules need to know of the owner, now: a UserAccess fits. */
export interface PatOwner {
  readonly userGuid: string
  readonly hasFullAccess: boolean
  readonly roleCount: number
  /** Guid → name of the responsibilities the owner holds. */
  readonly responsibilities: ReadonlyMap<string, string>
}

export const MAX_EXPIRATION_DAYS = 365
const MAX_NAME_LENGTH = 100

const PAT_FIELDS = ['name', 'expirationDays', 'responsibilityIds']

/**
 * Reads `{ name, expirationDays, responsibilityIds }`; every problem is one detail of a 400.
 * A field of another name is one too: `responsibilities` for `responsibilityIds` would
 * otherwise leave the scope empty, which asks for a full-access fallback PAT.
 */
export function readPatRequest(body: Body): PatRequest {
  const details: ErrorDetail[] = []
  const known = new Set(PAT_FIELDS.map((name) => name.toLowerCase()))
  for (const key of Object.keys(body).filter((key) => !known.has(key.toLowerCase())).slice(0, 5)) {
    details.push(problem(key.slice(0, 100), `Unknown field ${JSON.stringify(key.slice(0, 100))}: the body has the fields ${PAT_FIELDS.join(', ')}`))
  }
  const name = field(body, 'name')
  const days = field(body, 'expirationDays')
  const ids = field(body, 'responsibilityIds')
  if (typeof name !== 'string' || name.trim() === '') details.push(problem('name', 'name is required: a label for the PAT'))
  else if (name.trim().length > MAX_NAME_LENGTH) details.push(problem('name', `name may have at most ${MAX_NAME_LENGTH} characters`))
  else if (hasControlCharacter(name.trim())) details.push(problem('name', noControlCharacters('name')))
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_EXPIRATION_DAYS) {
    details.push(problem('expirationDays', `expirationDays must be a whole number from 1 to ${MAX_EXPIRATION_DAYS}`))
  }
  // Required (the contract's "explicit scope"): left out, it would read as the empty list that asks for a full-access fallback.
  if (ids === undefined) details.push(problem('responsibilityIds', 'responsibilityIds is required: the Guids of the responsibilities the PAT may use, or [] for a full-access fallback'))
  else if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string' || !GUID_PATTERN.test(id))) {
    details.push(problem('responsibilityIds', 'responsibilityIds must be an array of responsibility Guids'))
  }
  if (details.length > 0) throw validationFailed(details)
  return {
    name: (name as string).trim(),
    expirationDays: days as number,
    responsibilityIds: [...new Set((ids as string[]).map((id) => id.toLowerCase()))],
  }
}

/** Checks the request against what the owner holds now, then stores the PAT. */
export async function issuePat(db: TenantDatabase, owner: PatOwner, request: PatRequest): Promise<IssuedPat> {
  const fallback = request.responsibilityIds.length === 0
  if (fallback && !(owner.hasFullAccess && owner.roleCount === 0)) {
    const why = !owner.hasFullAccess ? 'you do not have full access' : `you have ${owner.roleCount} role(s)`
    throw validationFailed([
      problem(
        'responsibilityIds',
        `responsibilityIds is empty, but a PAT without responsibilities is a full-access fallback, allowed only to a user with full access and no roles (${why}); list the responsibilities the PAT may use`,
      ),
    ])
  }
  const notHeld = request.responsibilityIds.filter((id) => !owner.responsibilities.has(id))
  if (notHeld.length > 0) {
    throw validationFailed(notHeld.map((id) => problem('responsibilityIds', `you do not hold responsibility ${id} now`)))
  }
  const id = newGuid()
  const { secret, hash } = newSecret('pat', db.tenant)
  await inTransaction(db.pool, async (client) => {
    await client.query(
      `insert into "_Pat" ("Id", "UserGuid", "Name", "SecretHash", "ExpirationDays", "ExpiresAt", "IsFullAccessFallback")
       values ($1, $2, $3, $4, $5, now() + make_interval(days => $5), $6)`,
      [id, owner.userGuid, request.name, hash, request.expirationDays, fallback],
    )
    if (!fallback) {
      await client.query(
        `insert into "_PatResponsibility" ("PatId", "ResponsibilityGuid") select $1, unnest($2::uuid[])`,
        [id, request.responsibilityIds],
      )
    }
  })
  return { ...(await patById(db.pool, id))!, secret }
}

/** The user's PATs, newest first; every PAT of the tenant when `userGuid` is undefined. */
export async function listPats(db: TenantDatabase, userGuid: string | undefined): Promise<PatItem[]> {
  const { rows } = await db.pool.query(`${SELECT_PATS} where $1::uuid is null or p."UserGuid" = $1 ${GROUP_PATS}`, [userGuid ?? null])
  return rows.map(toItem)
}

/** Revokes a PAT (again: no change); undefined when the user has no such PAT. */
export async function revokePat(db: TenantDatabase, userGuid: string | undefined, id: string): Promise<PatItem | undefined> {
  if (!GUID_PATTERN.test(id)) return undefined
  await db.pool.query(
    `update "_Pat" set "RevokedAt" = now() where "Id" = $1 and ($2::uuid is null or "UserGuid" = $2) and "RevokedAt" is null`,
    [id, userGuid ?? null],
  )
  return patById(db.pool, id, userGuid)
}

/**
 * Replaces the secret of an active or expired PAT and restarts its lifetime; the old secret
 * stops working at once. A revoked or disabled PAT stays so (409): issue a new one.
 */
export async function regeneratePat(db: TenantDatabase, userGuid: string | undefined, id: string): Promise<IssuedPat | undefined> {
  const current = GUID_PATTERN.test(id) ? await patById(db.pool, id, userGuid) : undefined
  if (!current) return undefined
  if (current.status === 'revoked' || current.status === 'disabled') {
    throw RequestError.conflict(`PAT ${quotedName(current.name)} is ${current.status}; a ${current.status} PAT cannot be regenerated, issue a new one.`)
  }
  const { secret, hash } = newSecret('pat', db.tenant)
  const { rowCount } = await db.pool.query(
    `update "_Pat" set "SecretHash" = $2, "ExpiresAt" = now() + make_interval(days => "ExpirationDays"), "LastUsedAt" = null
      where "Id" = $1 and "RevokedAt" is null and "DisabledAt" is null`,
    [id, hash],
  )
  if (!rowCount) throw RequestError.conflict(`PAT ${quotedName(current.name)} was revoked or disabled meanwhile; issue a new one.`)
  return { ...(await patById(db.pool, id, userGuid))!, secret }
}

const SELECT_PATS = `
  select p."Id" as id, p."Name" as name, ${epochMs('p."CreatedAt"')} as "createdAt", ${epochMs('p."ExpiresAt"')} as "expiresAt",
         ${epochMs('p."LastUsedAt"')} as "lastUsedAt", p."RevokedAt" is not null as revoked, p."DisabledAt" is not null as disabled,
         p."IsFullAccessFallback" as "isFullAccessFallback",
         coalesce(array_agg(pr."ResponsibilityGuid"::text order by pr."ResponsibilityGuid")
                    filter (where pr."ResponsibilityGuid" is not null), '{}') as "responsibilityIds"
    from "_Pat" p left join "_PatResponsibility" pr on pr."PatId" = p."Id"`
const GROUP_PATS = `group by p."Id" order by p."CreatedAt" desc, p."Id"`

async function patById(pool: pg.Pool, id: string, userGuid?: string): Promise<PatItem | undefined> {
  const { rows } = await pool.query(`${SELECT_PATS} where p."Id" = $1 and ($2::uuid is null or p."UserGuid" = $2) ${GROUP_PATS}`, [
    id,
    userGuid ?? null,
  ])
  return rows.length > 0 ? toItem(rows[0]) : undefined
}

function toItem(row: Record<string, any>): PatItem {
  const status: PatStatus = row.revoked
    ? 'revoked'
    : row.disabled
      ? 'disabled'
      : row.expiresAt <= Date.now()
        ? 'expired'
        : 'active'
  return {
    id: row.id,
    name: row.name,
    createdAt: new Date(row.createdAt).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
    lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt).toISOString(),
    responsibilityIds: row.responsibilityIds,
    isFullAccessFallback: row.isFullAccessFallback,
    status,
  }
}

function problem(target: string, message: string): ErrorDetail {
  return { code: 'InvalidValue', message, target }
}


/** For the CLI: the owner by user name and responsibility names turned into Guids. */
export async function patRequestByNames(
  db: TenantDatabase,
  username: string,
  request: { name: string; expirationDays: number; responsibilities: readonly string[] },
): Promise<{ owner: PatOwner; request: PatRequest }> {
  const { rows: users } = await db.pool.query<{ guid: string }>(`select "Guid" as guid from "User" where "Username" = $1`, [username.trim()])
  const row = users[0] && (await loadUserRow(db.pool, users[0].guid))
  if (!row) throw new UserAdminError(`No user ${quotedName(username)} in tenant '${db.tenant}'.`)
  const { rows: known } = await db.pool.query<{ guid: string; name: string }>(
    `select "Guid" as guid, "Name" as name from "Responsibility" where "Name" = any($1::text[])`,
    [request.responsibilities],
  )
  const missing = request.responsibilities.filter((name) => !known.some((k) => k.name === name))
  if (missing.length > 0) throw new UserAdminError(`No responsibility ${missing.map(quotedName).join(', ')} in tenant '${db.tenant}'.`)
  return {
    owner: { userGuid: users[0].guid, hasFullAccess: row.hasFullAccess, roleCount: row.roleCount, responsibilities: new Map(row.responsibilities) },
    request: readPatRequest({ name: request.name, expirationDays: request.expirationDays, responsibilityIds: known.map((k) => k.guid) }),
  }
}
