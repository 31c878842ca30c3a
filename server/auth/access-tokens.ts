// Access tokens: short-lived HS256 JWTs (decisions.md "Authentication"). Claims: sub (user
// Guid), tid (tenant), iss, aud, iat, exp, jti. A verified token is remembered until it
// expires, so a request with a known token costs a map lookup, not an HMAC.
//
// JWT:SigningKey signs; it and JWT:PreviousSigningKeys verify, so a rotated key's tokens stay
// good while it is listed. The keys follow the config file while the server runs (useKeys).

import { randomUUID } from 'node:crypto'
import { errors, jwtVerify, SignJWT } from 'jose'
import { jwtPreviousSigningKeys, jwtSigningKey, type Config } from '../config/load-config.ts'
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

/** The key that signs, and every key that verifies: the signing one first, then the previous ones. */
interface SigningKeys {
  readonly written: string
  readonly signing: Uint8Array
  readonly verifying: readonly Uint8Array[]
}

export class AccessTokens {
  #keys: SigningKeys
  readonly #issuer: string
  readonly #audience: string
  readonly #lifetimeSeconds: number
  readonly #isKnownTenant: (tenant: string) => boolean
  readonly #verified = new Map<string, VerifiedToken>()

  constructor(jwt: Config['JWT'], isKnownTenant: (tenant: string) => boolean) {
    this.#keys = signingKeys(jwt)
    this.#issuer = jwt.Issuer
    this.#audience = jwt.Audience
    this.#lifetimeSeconds = Math.max(1, Math.round(jwt.AccessTokenExpirationHours * 3600))
    this.#isKnownTenant = isKnownTenant
  }

  /**
   * Takes the keys of a changed config (its watch, SIGHUP); whether they differ from those in
   * use. Keys that are not valid throw the ConfigError naming them, and those in use stay.
   */
  useKeys(jwt: Config['JWT']): boolean {
    const keys = signingKeys(jwt)
    if (keys.written === this.#keys.written) return false
    this.#keys = keys
    // A token remembered as verified may be one of a key now taken off the list.
    this.#verified.clear()
    return true
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
      .sign(this.#keys.signing)
    return { accessToken, accessTokenExpiresAt: new Date(exp * 1000).toISOString() }
  }

  /** The token's user and tenant, or a 401 saying what is wrong with it. */
  async verify(token: string): Promise<VerifiedToken> {
    const cached = this.#verified.get(token)
    if (cached) {
      if (cached.expiresAt > Date.now() && this.#isKnownTenant(cached.tenant)) return cached
      this.#verified.delete(token)
    }
    const keys = this.#keys
    const { sub, tid, exp } = await this.#verifiedPayload(token, keys.verifying)
    if (typeof tid !== 'string' || tid === '') throw AuthError.invalidToken('it names no tenant (tid)')
    if (!this.#isKnownTenant(tid)) throw AuthError.invalidToken(`tenant '${tid}' is unknown`)
    if (typeof sub !== 'string' || !GUID_PATTERN.test(sub)) throw AuthError.invalidToken('its subject is not a user')
    const verified: VerifiedToken = { userGuid: sub.toLowerCase(), tenant: tid, expiresAt: exp! * 1000 }
    // Unless the keys changed meanwhile: the cache was cleared for a reason.
    if (keys === this.#keys) this.#remember(token, verified)
    return verified
  }

  /** The claims of a token one of `keys` signed, or a 401 saying what is wrong with it. */
  async #verifiedPayload(token: string, keys: readonly Uint8Array[]) {
    for (const [i, key] of keys.entries()) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          issuer: this.#issuer,
          audience: this.#audience,
          requiredClaims: ['sub', 'exp', 'iat'],
        })
        return payload
      } catch (error) {
        // jose checks the signature before the claims: any other error is of a token this key signed.
        if (error instanceof errors.JWSSignatureVerificationFailed && i < keys.length - 1) continue
        throw AuthError.invalidToken(reasonOf(error))
      }
    }
    throw AuthError.invalidToken('its signature does not match')
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

function signingKeys(jwt: Config['JWT']): SigningKeys {
  const signing = jwtSigningKey(jwt)
  return { written: `${jwt.SigningKey},${jwt.PreviousSigningKeys}`, signing, verifying: [signing, ...jwtPreviousSigningKeys(jwt)] }
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
