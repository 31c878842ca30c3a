// What PostgreSQL cannot finish of a read body, done in Node after the statement:
// encrypted properties arrive as ciphertext and are decrypted with the tenant's key, and
// virtual properties are computed from inputs the SQL carries under "@needs.<Name>" keys
// (dropped afterwards). A read with neither passes through as text, only made compact.

import { compactJson } from './compact-json.ts'
import type { EntityModel } from '../../model/model.ts'
import type { PropertyCipher } from '../../tenancy/property-encryption.ts'
import type { BoundEntityRead } from '../semantic/bound.ts'

export function finishEntities(body: string, read: BoundEntityRead, cipher: PropertyCipher | undefined, single = false): string {
  if (!needsFinishing(read)) return compactJson(body)
  const parsed = JSON.parse(body)
  if (single) finishEntity(parsed, read, cipher)
  else for (const entity of parsed.value ?? []) finishEntity(entity, read, cipher)
  return JSON.stringify(parsed)
}

export function needsFinishing(read: BoundEntityRead): boolean {
  return (
    read.virtuals.length > 0 ||
    read.select.some((item) => item.property.decl.encrypted) ||
    read.expand.some((e) => needsFinishing(e.read))
  )
}

function finishEntity(row: Record<string, any>, read: BoundEntityRead, cipher: PropertyCipher | undefined): void {
  if (!row) return
  for (const item of [...read.select, ...read.needs]) {
    if (!item.property.decl.encrypted) continue
    const key = read.select.includes(item) ? item.publicName : `@needs.${item.property.name}`
    if (!cipher) throw new Error('encrypted property read without the tenant cipher')
    row[key] = cipher.decrypt(row[key])
  }
  if (read.virtuals.length > 0) {
    const entity: EntityModel = read.range.entity
    const input: Record<string, unknown> = {}
    for (const item of read.select) input[item.property.name] = row[item.publicName]
    for (const item of read.needs) input[item.property.name] = row[`@needs.${item.property.name}`]
    for (const item of read.needs) delete row[`@needs.${item.property.name}`]
    const now = new Date()
    for (const item of read.virtuals) {
      const rule = entity.rules.computed.get(item.property.name)!
      row[item.publicName] = rule.value(input, { before: undefined, now, today: now.toISOString().slice(0, 10), find: async () => [] }) ?? null
    }
  }
  for (const expand of read.expand) {
    const value = row[expand.publicName]
    if (Array.isArray(value)) for (const child of value) finishEntity(child, expand.read, cipher)
    else if (value) finishEntity(value, expand.read, cipher)
  }
}
