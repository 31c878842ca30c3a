// Access tokens: short-lived HS256 JWTs (decisions.md "Authentication"). Claims: sub (user
// Guid), tid (tenant), iss, aud, iat, exp, jti. A verified token is remembered until it
// expires, so a request with a known token costs a map lookup, not an HMAC.

import { randomUUID } from 'node:crypto'
import { errors, jwtVerify, SignJWT } from 'jose'
import { jwtSigningKey, type Config } from '../config/load-config.ts'
import { AuthError } from '../errors.ts'
import { GUID_PATTERN } from '../persistence/guid.ts'

export interface VerifiedToken {
  readonly userGuid: string
  readonly tenant: string
  /** Expiry in ms since the epoch. */
  readonly expiresAt: number
}

export interface IssuedAccessToken {
  readonly accessToken: string
  readonly accessTokenExpiresAt: string
}

const CACHE_LIMIT = 50_000

export class AccessTokens {
  readonly #key: Uint8Array
  readonly #issuer: string
  readonly #audience: string
  readonly #lifetimeSeconds: number
  readonly #isKnownTenant: (tenant: string) => boolean
  readonly #verified = new Map<string, VerifiedToken>()

  constructor(jwt: Config['JWT'], isKnownTenant: (tenant: string) => boolean) {
    this.#key = jwtSigningKey(jwt)
    this.#issuer = jwt.Issuer
    this.#audience = jwt.Audience
    this.#lifetimeSeconds = Math.max(1, Math.round(jwt.AccessTokenExpirationHours * 3600))
    this.#isKnownTenant = isKnownTenant
  }

  async issue(tenant: string, userGuid: string): Promise<IssuedAccessToken> {
    const now = Math.floor(Date.now() / 1000)
    const exp = now + this.#lifetimeSeconds
    const accessToken = await new SignJWT({ tid: tenant })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userGuid)
      .setIssuer(this.#issuer)
      .setAudience(this.#audience)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.#key)
    return { accessToken, accessTokenExpiresAt: new Date(exp * 1000).toISOString() }
  }

  /** The token's user and tenant, or a 401 saying what is wrong with it. */
  async verify(token: string): Promise<VerifiedToken> {
    const cached = this.#verified.get(token)
    if (cached) {
      if (cached.expiresAt > Date.now() && this.#isKnownTenant(cached.tenant)) return cached
      this.#verified.delete(token)
    }
    let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
    try {
      ;({ payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        issuer: this.#issuer,
        audience: this.#audience,
        requiredClaims: ['sub', 'exp', 'iat'],
      }))
    } catch (error) {
      throw AuthError.invalidToken(reasonOf(error))
    }
    const { sub, tid, exp } = payload
    if (typeof tid !== 'string' || tid === '') throw AuthError.invalidToken('it names no tenant (tid)')
    if (!this.#isKnownTenant(tid)) throw AuthError.invalidToken(`tenant '${tid}' is unknown`)
    if (typeof sub !== 'string' || !GUID_PATTERN.test(sub)) throw AuthError.invalidToken('its subject is not a user')
    const verified: VerifiedToken = { userGuid: sub.toLowerCase(), tenant: tid, expiresAt: exp! * 1000 }
    this.#remember(token, verified)
    return verified
  }

  #remember(token: string, verified: VerifiedToken): void {
    if (this.#verified.size >= CACHE_LIMIT) {
      const now = Date.now()
      for (const [key, value] of this.#verified) if (value.expiresAt <= now) this.#verified.delete(key)
      // Still full: forget the oldest half rather than grow without bound.
      if (this.#verified.size >= CACHE_LIMIT) {
        let drop = CACHE_LIMIT / 2
        for (const key of this.#verified.keys()) {
          if (drop-- <= 0) break
          this.#verified.delete(key)
        }
      }
    }
    this.#verified.set(token, verified)
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'it has expired'
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'it was issued by another issuer'
    if (error.claim === 'aud') return 'it is meant for another audience'
    return `its ${error.claim} claim is missing or wrong`
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not match'
  return 'it is malformed'
}
