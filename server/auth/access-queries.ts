// The SQL behind access resolution (specification 5.9 b–d): a user's state and the
// responsibilities of their roles through the hierarchy, and a PAT by its secret's hash.
// Each is one statement; the caches of access-service.ts keep them off most requests.

import type pg from 'pg'

export interface UserRow {
  readonly username: string
  readonly hasFullAccess: boolean
  readonly disabled: boolean
  /** Roles assigned directly (a fallback PAT needs zero). */
  readonly roleCount: number
  /** [Guid, Name] of each responsibility in effect; every one for a full-access user. */
  readonly responsibilities: readonly [string, string][]
}

/** Times in ms since the epoch: the tenant pool hands timestamps over as text (tenant-database.ts). */
export interface PatRow {
  readonly id: string
  readonly userGuid: string
  readonly expiresAt: number
  readonly lastUsedAt: number | null
  readonly revokedAt: number | null
  readonly disabledAt: number | null
  readonly isFullAccessFallback: boolean
  readonly responsibilityIds: readonly string[]
}

/**
 * A supervisor role has the access of all its descendants (decisions.md "Roles and
 * permissions"): from the assigned roles down through "Parent", transitively. `union`, not
 * `union all`, so even a cycle that slipped past the rules ends.
 */
const USER_ACCESS = `
  with recursive effective ("Guid") as (
    select "Role_Guid" from "UserRole" where "User_Guid" = $1
    union
    select r."Guid" from "Role" r join effective e on r."Parent_Guid" = e."Guid"
  )
  select u."Username" as username,
         coalesce(u."HasFullAccess", false) as "hasFullAccess",
         coalesce(u."Disabled", false) as disabled,
         (select count(*)::int from "UserRole" where "User_Guid" = $1) as "roleCount",
         coalesce((select json_agg(json_build_array(s."Guid", s."Name") order by s."Name")
                     from "Responsibility" s
                    where coalesce(u."HasFullAccess", false)
                       or s."Guid" in (select rr."Responsibility_Guid"
                                         from "RoleResponsibility" rr join effective e on rr."Role_Guid" = e."Guid")),
                  '[]'::json) as responsibilities
    from "User" u
   where u."Guid" = $1`

export async function loadUserRow(pool: pg.Pool, userGuid: string): Promise<UserRow | undefined> {
  const { rows } = await pool.query<UserRow>(USER_ACCESS, [userGuid])
  return rows[0]
}

const PAT_BY_HASH = `
  select p."Id" as id, p."UserGuid" as "userGuid", ${epochMs('p."ExpiresAt"')} as "expiresAt",
         ${epochMs('p."LastUsedAt"')} as "lastUsedAt", ${epochMs('p."RevokedAt"')} as "revokedAt",
         ${epochMs('p."DisabledAt"')} as "disabledAt", p."IsFullAccessFallback" as "isFullAccessFallback",
         coalesce(array_agg(pr."ResponsibilityGuid"::text) filter (where pr."ResponsibilityGuid" is not null), '{}') as "responsibilityIds"
    from "_Pat" p left join "_PatResponsibility" pr on pr."PatId" = p."Id"
   where p."SecretHash" = $1
   group by p."Id"`

export function epochMs(column: string): string {
  return `(extract(epoch from ${column}) * 1000)::float8`
}

export async function loadPatRow(pool: pg.Pool, hash: Buffer): Promise<PatRow | undefined> {
  const { rows } = await pool.query<PatRow>(PAT_BY_HASH, [hash])
  return rows[0]
}

/** Disables a fallback PAT whose owner no longer qualifies; true if this call disabled it. */
export async function disablePat(pool: pg.Pool, patId: string): Promise<boolean> {
  const { rowCount } = await pool.query(`update "_Pat" set "DisabledAt" = now() where "Id" = $1 and "DisabledAt" is null`, [patId])
  return (rowCount ?? 0) > 0
}

/** Records when PATs were last used, many in one statement; never moves a time backwards. */
export async function recordPatUse(pool: pg.Pool, uses: ReadonlyMap<string, Date>): Promise<void> {
  await pool.query(
    `update "_Pat" p set "LastUsedAt" = v.t
       from unnest($1::uuid[], $2::timestamptz[]) as v(id, t)
      where p."Id" = v.id and (p."LastUsedAt" is null or p."LastUsedAt" < v.t)`,
    [[...uses.keys()], [...uses.values()]],
  )
}
