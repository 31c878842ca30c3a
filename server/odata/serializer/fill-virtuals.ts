// Virtual properties are computed in Node after the statement: the SQL carries their inputs
// under "@needs.<Name>" keys, this fills each virtual from them and drops the inputs. Reads
// without virtual properties pass through untouched, as text.

import type { EntityModel, Model } from '../../model/model.ts'
import type { BoundEntityRead } from '../semantic/bound.ts'

export function fillVirtuals(body: string, read: BoundEntityRead, model: Model, single = false): string {
  if (!hasVirtuals(read)) return body
  const parsed = JSON.parse(body)
  if (single) fillEntity(parsed, read, model)
  else for (const entity of parsed.value ?? []) fillEntity(entity, read, model)
  return JSON.stringify(parsed)
}

function hasVirtuals(read: BoundEntityRead): boolean {
  return read.virtuals.length > 0 || read.expand.some((e) => hasVirtuals(e.read))
}

function fillEntity(row: Record<string, any>, read: BoundEntityRead, model: Model): void {
  if (!row) return
  const entity: EntityModel = read.range.entity
  if (read.virtuals.length > 0) {
    const input: Record<string, unknown> = {}
    for (const item of read.select) input[item.property.name] = row[item.publicName]
    for (const item of read.needs) input[item.property.name] = row[`@needs.${item.property.name}`]
    for (const item of read.needs) delete row[`@needs.${item.property.name}`]
    for (const item of read.virtuals) {
      const rule = entity.rules.computed.get(item.property.name)!
      const today = new Date()
      row[item.publicName] = rule.value(input, { before: undefined, now: today, today: today.toISOString().slice(0, 10), find: async () => [] }) ?? null
    }
  }
  for (const expand of read.expand) {
    const value = row[expand.publicName]
    if (Array.isArray(value)) for (const child of value) fillEntity(child, expand.read, model)
    else if (value) fillEntity(value, expand.read, model)
  }
}
