// Password hashing with scrypt (memory-hard, in Node's crypto: no native dependency).
// Stored as `scrypt$N$r$p$salt$hash` so parameters can be raised later without a migration.

import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { channel } from 'node:diagnostics_channel'

const N = 2 ** 15
const R = 8
const P = 1
const KEY_LENGTH = 32
const MAX_MEMORY = 64 * 1024 * 1024

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  )
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, N, R, P)
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/**
 * Told `{ n, r, p }` at every verification: the scrypt work it did. Sign-in promises the same
 * work whether or not the tenant and user exist; a subscriber (a test, a monitor) can see it.
 */
export const passwordVerifications = channel('entityctl:password-verification')

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  // A hash we cannot read costs the same work as one we can; it matches nothing.
  if (scheme !== 'scrypt' || !hash) {
    await verifyPassword(password, DECOY_HASH)
    return false
  }
  const expected = Buffer.from(hash, 'base64url')
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p))
  if (passwordVerifications.hasSubscribers) passwordVerifications.publish({ n: Number(n), r: Number(r), p: Number(p) })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** A hash of nothing, verified against when the user does not exist, so timing tells nothing. */
export const DECOY_HASH = await hashPassword(randomBytes(16).toString('hex'))

export function checkPasswordStrength(password: string): true | string {
  if (typeof password !== 'string' || password.length < 8) return 'a password needs at least 8 characters'
  if (password.length > 1024) return 'a password may have at most 1024 characters'
  return true
}
