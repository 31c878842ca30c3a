// Sign-in and refresh (specification 4.4, 5.2–5.3; decisions.md "Authentication").
//
// Sign-in: a wrong tenant, user name or password, and a disabled user, all give the same 401
// after the same work: a password is always verified, against a decoy hash when there is no
// real one. Each attempt is counted by the throttle before its password is checked, so that
// concurrent attempts cannot outrun it (sign-in-throttle.ts). Refresh: a refresh token is used
// once; each use returns its successor in the same family (one family per sign-in).
// Presenting a used one again revokes the whole family.

import type pg from 'pg'
import { TENANT_NAME } from '../config/load-config.ts'
import { AuthError, RequestError, type ThrottleLimit } from '../errors.ts'
import { newGuid } from '../persistence/guid.ts'
import type { AuthServices } from './auth-services.ts'
import type { Scope } from './sign-in-throttle.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { DECOY_HASH, verifyPassword } from './passwords.ts'
import { bodyObject, exactFields, requiredString } from './request-body.ts'
import { newSecret, parseSecret } from './secrets.ts'
import { inTransaction } from '../persistence/sql.ts'

export interface TokenPair {
  readonly accessToken: string
  readonly accessTokenExpiresAt: string
  readonly refreshToken: string
  readonly refreshTokenExpiresAt: string
  readonly tokenType: 'Bearer'
}

/** What sign-in and refresh tell the request's state: the tenant, once it is one the server serves (for the log and the metrics). */
export interface SignInRequest {
  tenant?: TenantDatabase
}

/** `clientAddress`: whom the request came from (client-address.ts), for the throttle. */
export async function signIn(services: AuthServices, body: unknown, clientAddress: string, request: SignInRequest = {}): Promise<TokenPair> {
  const fields = bodyObject(body)
  exactFields(fields, ['TenantId', 'Username', 'Password'], services.naming.toPublic)
  const tenant = requiredString(fields, 'TenantId', 100)
  const username = requiredString(fields, 'Username', 200).trim()
  // PostgreSQL text cannot hold NUL: no user has such a name, and it must not reach a query.
  if (username.includes('\u0000')) throw RequestError.invalid('Username may not contain NUL characters.', 'Username')
  const password = requiredString(fields, 'Password', 1024)
  const { throttle } = services.auth
  const attempt = { tenant, username, address: clientAddress }
  // Held open until the tokens are issued (tenant-registry.ts).
  const lease = TENANT_NAME.test(tenant) ? await services.tenants.acquire(tenant) : undefined
  try {
    const db = lease?.database
    // A guessed name is never named: only a tenant of ours reaches the log line and the metrics.
    request.tenant = db
    const refusal = await throttle.reserve(db?.pool, attempt)
    // Labelled with the tenant only when it is one of ours: a guessed name must not become a series.
    const known = lease ? tenant : undefined
    if (refusal) {
      services.metrics.signInThrottled(known, THROTTLE_KEY[refusal.scope])
      throw AuthError.throttled(THROTTLE_KEY[refusal.scope], refusal.waitSeconds)
    }

    let userGuid: string | undefined
    try {
      userGuid = await checkPassword(db, username, password)
    } finally {
      // Also when the check itself threw: the reservation must end.
      await throttle.settle(db?.pool, attempt, userGuid !== undefined)
    }
    if (!db || userGuid === undefined) {
      services.metrics.signInFailed(known)
      throw AuthError.invalidCredentials()
    }
    return await issueTokens(services, db, userGuid, newGuid())
  } finally {
    lease?.release()
  }
}

/** The configuration key of each limit of the throttle: the answer, the log and the metrics name it. */
const THROTTLE_KEY = {
  user: 'SignIn:MaxFailures',
  address: 'SignIn:MaxFailuresPerAddress',
  tenant: 'SignIn:MaxFailuresPerTenant',
} as const satisfies Record<Scope, ThrottleLimit>

export async function refresh(services: AuthServices, body: unknown, request: SignInRequest = {}): Promise<TokenPair> {
  // No length limit here: any string is a candidate, and whatever is not a refresh token of
  // ours (an access token, say) is refused by parseSecret with the same 401 as a used one.
  const fields = bodyObject(body)
  exactFields(fields, ['RefreshToken'], services.naming.toPublic)
  const token = requiredString(fields, 'RefreshToken', Infinity)
  const parsed = parseSecret('rt', token)
  // Committed even when the token is refused: a reuse revokes its whole family.
  const pair = parsed && (await services.tenants.use(parsed.tenant, (db) => {
    request.tenant = db
    return inTransaction(db.pool, (client) => rotate(services, db, client, parsed.hash))
  }))
  if (!pair) throw AuthError.invalidRefreshToken()
  return pair
}

/** Uses the token and issues its successor; undefined (family revoked as needed) when it may not be used. */
async function rotate(services: AuthServices, db: TenantDatabase, client: pg.PoolClient, hash: Buffer): Promise<TokenPair | undefined> {
  const { rows: claimed } = await client.query<{ userGuid: string; familyId: string }>(
    `update "_RefreshToken" set "UsedAt" = now()
      where "TokenHash" = $1 and "UsedAt" is null and "RevokedAt" is null and "ExpiresAt" > now()
      returning "UserGuid" as "userGuid", "FamilyId" as "familyId"`,
    [hash],
  )
  if (claimed.length === 0) {
    // Used before: whoever holds this family's tokens may be an attacker; end them all.
    await client.query(
      `update "_RefreshToken" set "RevokedAt" = now()
        where "RevokedAt" is null and "FamilyId" = (select "FamilyId" from "_RefreshToken" where "TokenHash" = $1 and "UsedAt" is not null)`,
      [hash],
    )
    return undefined
  }
  const { userGuid, familyId } = claimed[0]
  const { rows: users } = await client.query(`select 1 from "User" where "Guid" = $1 and not coalesce("Disabled", false)`, [userGuid])
  if (users.length === 0) {
    await client.query(`update "_RefreshToken" set "RevokedAt" = now() where "FamilyId" = $1 and "RevokedAt" is null`, [familyId])
    return undefined
  }
  return issueTokens(services, db, userGuid, familyId, client)
}

async function issueTokens(
  services: AuthServices,
  db: TenantDatabase,
  userGuid: string,
  familyId: string,
  client: pg.Pool | pg.PoolClient = db.pool,
): Promise<TokenPair> {
  const { secret, hash } = newSecret('rt', db.tenant)
  const expiresAt = new Date(Date.now() + services.config.JWT.RefreshTokenExpirationDays * 86_400_000)
  await client.query(
    `insert into "_RefreshToken" ("Id", "UserGuid", "FamilyId", "TokenHash", "ExpiresAt") values ($1, $2, $3, $4, $5)`,
    [newGuid(), userGuid, familyId, hash, expiresAt],
  )
  const access = await services.auth.tokens.issue(db.tenant, userGuid)
  return { ...access, refreshToken: secret, refreshTokenExpiresAt: expiresAt.toISOString(), tokenType: 'Bearer' }
}

/** The user's Guid when the password is theirs and they may sign in; the same work either way. */
async function checkPassword(db: TenantDatabase | undefined, username: string, password: string): Promise<string | undefined> {
  const user = db ? await findCredential(db.pool, username) : undefined
  const matches = await verifyPassword(password, user?.passwordHash ?? DECOY_HASH)
  return user?.passwordHash && matches && !user.disabled ? user.guid : undefined
}

async function findCredential(
  pool: pg.Pool,
  username: string,
): Promise<{ guid: string; passwordHash: string | null; disabled: boolean } | undefined> {
  const { rows } = await pool.query(
    `select u."Guid" as guid, c."PasswordHash" as "passwordHash", coalesce(u."Disabled", false) as disabled
       from "User" u left join "_Credential" c on c."UserGuid" = u."Guid"
      where u."Username" = $1`,
    [username],
  )
  return rows[0]
}
