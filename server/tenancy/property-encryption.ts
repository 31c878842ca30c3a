// Properties a plugin marks `.encrypted()` are stored as AES-256-GCM ciphertext under the
// tenant's EncryptionKey: authenticated, so a wrong key fails loudly instead of returning
// garbage. Stored form: `enc1:` + base64(iv ‖ tag ‖ ciphertext of the JSON value).

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { ServiceError } from '../errors.ts'

const PREFIX = 'enc1:'
const IV_BYTES = 12
const TAG_BYTES = 16

export interface PropertyCipher {
  encrypt(value: unknown): string | null
  decrypt(stored: unknown): unknown
}

/**
 * `previousBase64Key`: the key before a rotation (tenant-keys.ts), set only while it runs.
 * Values are always written under `base64Key`; a value that the current key cannot open is
 * tried with the previous one, so reads go on while the rotation re-encrypts the rows.
 */
export function propertyCipher(tenant: string, base64Key: string, previousBase64Key?: string): PropertyCipher {
  const current = singleKeyCipher(tenant, base64Key)
  if (!previousBase64Key) return current
  const previous = singleKeyCipher(tenant, previousBase64Key)
  return {
    encrypt: current.encrypt,
    decrypt(stored) {
      try {
        return current.decrypt(stored)
      } catch {
        return previous.decrypt(stored)
      }
    },
  }
}

function singleKeyCipher(tenant: string, base64Key: string): PropertyCipher {
  const key = Buffer.from(base64Key, 'base64')
  if (key.length !== 32) throw new Error(`Tenants:${tenant}:EncryptionKey must be 32 bytes, base64 encoded`)
  return {
    encrypt(value) {
      if (value === null || value === undefined) return null
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')
    },
    decrypt(stored) {
      if (stored === null || stored === undefined) return null
      if (typeof stored !== 'string' || !stored.startsWith(PREFIX)) throw wrongKey(tenant, 'a stored value is not encrypted')
      const raw = Buffer.from(stored.slice(PREFIX.length), 'base64')
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
        decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
        const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
        return JSON.parse(text)
      } catch {
        throw wrongKey(tenant, 'a value cannot be decrypted')
      }
    },
  }
}

function wrongKey(tenant: string, what: string): ServiceError {
  return new ServiceError('EncryptionKeyMismatch', `Tenant '${tenant}': ${what} with the configured EncryptionKey; the key is wrong or was changed. No value is returned rather than a wrong one.`)
}
