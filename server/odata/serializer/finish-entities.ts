// What PostgreSQL cannot finish of a read body, done in Node after the statement:
// encrypted properties arrive as ciphertext and are decrypted with the tenant's key, and
// virtual properties are computed from inputs the SQL carries under "@needs.<Name>" keys
// (dropped afterwards). A read with neither passes through untouched, as text. The values
// made here follow the negotiated format as the statement's do: under IEEE754Compatible=true
// a decimal is a string, whether PostgreSQL wrote it or a plugin computed it.

import { PluginError, type ServiceError } from '../../errors.ts'
import type { EntityModel, ScalarProperty } from '../../model/model.ts'
import { callPlugin, pluginValue } from '../../rules/plugin-call.ts'
import type { PropertyCipher } from '../../tenancy/property-encryption.ts'
import type { BoundEntityRead, BoundSelectItem } from '../semantic/bound.ts'

/** How a body is finished: the tenant's key for encrypted values; `ieee754`: decimals as strings. */
export interface Finishing {
  readonly cipher: PropertyCipher | undefined
  readonly ieee754: boolean
}

export function finishEntities(body: string, read: BoundEntityRead, finishing: Finishing, single = false): string {
  if (!needsFinishing(read)) return body
  const parsed = JSON.parse(body)
  if (single) finishEntity(parsed, read, finishing)
  else for (const entity of parsed.value ?? []) finishEntity(entity, read, finishing)
  return JSON.stringify(parsed)
}

export function needsFinishing(read: BoundEntityRead): boolean {
  return (
    read.virtuals.length > 0 ||
    read.select.some((item) => item.property.decl.encrypted) ||
    read.expand.some((e) => needsFinishing(e.read))
  )
}

function finishEntity(row: Record<string, any>, read: BoundEntityRead, finishing: Finishing): void {
  if (!row) return
  const { cipher } = finishing
  const encrypted = [...read.select, ...read.needs].filter((item) => item.property.decl.encrypted)
  const keyOf = (item: BoundSelectItem) => (read.select.includes(item) ? item.publicName : `@needs.${item.property.name}`)
  for (const item of encrypted) {
    if (!cipher) throw new Error('encrypted property read without the tenant cipher')
    row[keyOf(item)] = cipher.decrypt(row[keyOf(item)])
  }
  if (read.virtuals.length > 0) {
    const entity: EntityModel = read.range.entity
    const input: Record<string, unknown> = {}
    for (const item of read.select) input[item.property.name] = ruleInput(row[item.publicName], item.property)
    for (const item of read.needs) input[item.property.name] = row[`@needs.${item.property.name}`]
    for (const item of read.needs) delete row[`@needs.${item.property.name}`]
    for (const { navigation, properties } of read.navigationNeeds ?? []) {
      const related = row[`@needs.${navigation.name}`]
      delete row[`@needs.${navigation.name}`]
      const decrypted = (entity: Record<string, unknown>) => decryptedRelated(entity, properties, cipher)
      input[navigation.name] = Array.isArray(related) ? related.map(decrypted) : related && decrypted(related)
    }
    const now = new Date()
    for (const item of read.virtuals) {
      const name = item.property.name
      const rule = entity.rules.computed.get(name)!
      const what = `computed ${entity.name}.${name}`
      const value = callPlugin(what, () => rule.value(input, { before: undefined, now, today: now.toISOString().slice(0, 10), find: () => findUnavailable(entity, name) }))
      if (isPromise(value)) throw promised(what, value)
      row[item.publicName] = written(pluginValue(what, `${entity.name}.${name}`, item.property.decl, value), item.property, finishing)
    }
  }
  for (const item of encrypted) if (read.select.includes(item)) row[item.publicName] = written(row[item.publicName], item.property, finishing)
  for (const expand of read.expand) {
    const value = row[expand.publicName]
    if (Array.isArray(value)) for (const child of value) finishEntity(child, expand.read, finishing)
    else if (value) finishEntity(value, expand.read, finishing)
  }
}

/** A related entity a virtual property reads, its encrypted values decrypted. */
function decryptedRelated(related: Record<string, unknown>, properties: readonly ScalarProperty[], cipher: PropertyCipher | undefined): Record<string, unknown> {
  for (const property of properties) {
    if (!property.decl.encrypted) continue
    if (!cipher) throw new Error('encrypted property read without the tenant cipher')
    related[property.name] = cipher.decrypt(related[property.name] as string)
  }
  return related
}

/**
 * A virtual property is computed while the answer is written, outside any unit of work: its
 * rule reads what its `from` names, and searching other entities is refused by name rather
 * than answered with nothing.
 */
function findUnavailable(entity: EntityModel, property: string): never {
  throw PluginError.fault(`computed ${entity.name}.${property}`, 'called find, which a virtual property cannot use: name what it reads in from')
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
}

/**
 * An async virtual rule (as a stored one may be, or one awaiting find): the answer is written
 * now, so what the promise settles to comes too late. What it rejects with (find's refusal) is
 * dropped, not left to log as an unhandled rejection: the error names the rule and the cause.
 */
function promised(what: string, value: PromiseLike<unknown>): ServiceError {
  Promise.resolve(value).catch(() => {})
  return PluginError.fault(what, 'returned a promise: a virtual property is computed as the answer is written, so its rule answers at once (no async, no find): name what it reads in from')
}

/**
 * A selected value as a rule reads it: a decimal the statement wrote as a string
 * (IEEE754Compatible=true) is a number again, as rules see decimals everywhere else.
 */
function ruleInput(value: unknown, property: ScalarProperty): unknown {
  return property.type === 'Decimal' && typeof value === 'string' ? Number(value) : value
}

/** A value made in Node, as the statement writes one of its type: a decimal as a string under IEEE754Compatible=true. */
function written(value: unknown, property: ScalarProperty, finishing: Finishing): unknown {
  return finishing.ieee754 && property.type === 'Decimal' && typeof value === 'number' ? String(value) : value
}
