// Opaque bearer secrets: refresh tokens and PAT secrets. Neither request says which tenant it
// is for, so the tenant is written into the secret; its database holds only the SHA-256 of
// the whole string (32 random bytes need no slow hash), looked up by that hash.
//
//   ectl_pat_acme.<43 chars: 32 random bytes, base64url>.<6 chars: CRC-32, base64url>
//   ectl_rt_acme.<43 chars>.<6 chars>
//
// The prefix lets secret scanners recognise a leaked one; the checksum turns away a mistyped or
// truncated secret without a database round trip.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { TENANT_NAME } from '../config/load-config.ts'

export type SecretKind = 'pat' | 'rt'

export interface ParsedSecret {
  readonly tenant: string
  /** SHA-256 of the whole secret, as stored. */
  readonly hash: Buffer
}

export function newSecret(kind: SecretKind, tenant: string): { secret: string; hash: Buffer } {
  const body = `ectl_${kind}_${tenant}.${randomBytes(32).toString('base64url')}`
  const secret = `${body}.${checksum(body)}`
  return { secret, hash: hashSecret(secret) }
}

/** The tenant and hash of a well-formed secret of this kind; undefined for anything else. */
export function parseSecret(kind: SecretKind, secret: unknown): ParsedSecret | undefined {
  if (typeof secret !== 'string' || secret.length > 200) return undefined
  const prefix = `ectl_${kind}_`
  if (!secret.startsWith(prefix)) return undefined
  const parts = secret.slice(prefix.length).split('.')
  if (parts.length !== 3 || !TENANT_NAME.test(parts[0]) || !/^[A-Za-z0-9_-]{43}$/.test(parts[1])) return undefined
  const body = secret.slice(0, secret.lastIndexOf('.'))
  if (!safeEqual(Buffer.from(parts[2]), Buffer.from(checksum(body)))) return undefined
  return { tenant: parts[0], hash: hashSecret(secret) }
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest()
}

export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

function checksum(body: string): string {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(crc32(body))
  return bytes.toString('base64url')
}
