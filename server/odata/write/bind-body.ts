// Binds a JSON request body to the model, as a write plan's operation: public names to
// properties, values parsed by type, references bound (`Customer@odata.bind`, `CustomerGuid`,
// `{ "Guid": … }`), related entities created (deep insert). Pure: nothing here reads the
// database, so a body is refused whole before anything is written. Every problem of the body
// is gathered into one ValidationFailed, so a client learns all of them at once. Before any
// of it, the body's size in entities is checked against the limits (ApiOptions:MaxBodyEntities,
// MaxCollectionMembers).

import { RequestError, validationFailed, type ErrorDetail } from '../../errors.ts'
import type { EntityModel, Model, ReferenceProperty } from '../../model/model.ts'
import { KEY } from '../../model/model.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import { GUID_PATTERN } from '../../persistence/guid.ts'
import { parseClientValue } from '../../rules/values.ts'
import { DEFAULT_NAMESPACE } from '../metadata/build-csdl.ts'
import type { CreateOperation } from '../../writes/write-plan.ts'
import { publicProperties } from '../semantic/bind-context.ts'
import { boundProperty, isTypeControl } from './control-information.ts'
import type { NestedWrites } from '../semantic/authorize.ts'

export type WriteMode = 'create' | 'patch' | 'put'

export interface BodyContext {
  readonly model: Model
  readonly naming: NamingPolicy
  readonly limits: BodyLimits
  /** The service root of the request (`http://host/api/`): an absolute bind URL must start with it. */
  readonly serviceRoot: string
}

/** ApiOptions:MaxBodyEntities and ApiOptions:MaxCollectionMembers. */
export interface BodyLimits {
  readonly maxEntities: number
  readonly maxCollectionMembers: number
}

/** The create of an entity (and, nested, of its related ones) a body asks for. */
export function bindCreateBody(context: BodyContext, entity: EntityModel, body: unknown): CreateOperation {
  checkBodyLimits(context.naming, context.limits, entity, body)
  const failures: ErrorDetail[] = []
  const created = bindCreate(context, entity, body, '', failures)
  checkKeysGivenOnce(context, created, failures)
  if (failures.length) throw validationFailed(failures)
  return created
}

/**
 * One Guid given to two entities of a body (two deep-inserted lines) would make them one, and
 * the body contradicts itself: refused, naming each repetition.
 *   { "Lines": [{ "Guid": g, … }, { "Guid": g, … }] }  →  Lines/1/Guid
 */
function checkKeysGivenOnce(context: BodyContext, created: CreateOperation, failures: ErrorDetail[]): void {
  const given = new Set<string>()
  const visit = (operation: CreateOperation, path: string) => {
    if (operation.key) {
      const identity = `${operation.entity}(${operation.key})`
      if (given.has(identity)) {
        failures.push({ code: 'ValidationFailed', target: `${path}${context.naming.toPublic(KEY)}`, message: `The body creates ${identity} more than once.` })
      }
      given.add(identity)
    }
    const members = new Map<string, number>()
    for (const { property, create } of operation.nested) {
      const name = context.naming.toPublic(property)
      const kind = context.model.entities.get(operation.entity)?.properties.get(property)?.kind
      const index = members.get(property) ?? 0
      members.set(property, index + 1)
      visit(create, kind === 'collection' ? `${path}${name}/${index}/` : `${path}${name}/`)
    }
  }
  visit(created, '')
}

/** The values a PATCH or PUT body sets on the entity `key` (a PUT's: null for every updatable property it leaves out). */
export function bindUpdateBody(context: BodyContext, entity: EntityModel, key: string, body: unknown, mode: 'patch' | 'put'): Record<string, unknown> {
  checkBodyLimits(context.naming, context.limits, entity, body)
  const failures: ErrorDetail[] = []
  const target: Target = { key: key.toLowerCase(), values: {}, nested: [], members: [] }
  assign(context, entity, target, body, mode, '', failures)
  if (failures.length) throw validationFailed(failures)
  return target.values
}

/** What assign() fills: the values of one entity, and for a create what is created or bound with it. */
interface Target {
  readonly key: string | undefined
  readonly values: Record<string, unknown>
  readonly nested: { property: string; create: CreateOperation }[]
  readonly members: { property: string; keys: string[] }[]
}

function bindCreate(context: BodyContext, entity: EntityModel, body: unknown, path: string, failures: ErrorDetail[]): CreateOperation {
  const given = body && typeof body === 'object' ? (body as Record<string, unknown>)[context.naming.toPublic(KEY)] : undefined
  const valid = typeof given === 'string' && GUID_PATTERN.test(given)
  if (given !== undefined && !valid) {
    failures.push({ code: 'ValidationFailed', target: `${path}${KEY}`, message: 'Guid must be a GUID.' })
  }
  const target: Target = { key: valid ? given.toLowerCase() : undefined, values: {}, nested: [], members: [] }
  assign(context, entity, target, body, 'create', path, failures)
  return { kind: 'create', entity: entity.name, ...(target.key ? { key: target.key } : {}), values: target.values, nested: target.nested, members: target.members }
}

function assign(context: BodyContext, entity: EntityModel, record: Target, body: unknown, mode: WriteMode, path: string, failures: ErrorDetail[]): void {
  const fail = (target: string, message: string) => failures.push({ code: 'ValidationFailed', target: `${path}${target}`, message })
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    fail('', `The body must be a JSON object with the properties of ${entity.name}.`)
    return
  }
  const properties = publicProperties(entity, context.naming)
  const given = new Set<string>()
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (isTypeControl(name) && !namesType(value, entity)) {
      fail(name, `${String(value)} is not the type of this entity: ${entity.name}s are #${DEFAULT_NAMESPACE}.${entity.name} (no type derives from another).`)
      continue
    }
    const boundName = boundProperty(name)
    if (name.startsWith('@') || (name.includes('@') && boundName === undefined)) continue
    // `#entityctl.Close`: a method advertised in a full-metadata answer (OData JSON 4.01 §17),
    // sent back with the entity it came in; no property is named so.
    if (name.startsWith('#')) continue
    const isBind = boundName !== undefined
    const propertyName = boundName ?? name
    const property = properties.get(propertyName)
    if (!property) {
      fail(propertyName, `${entity.name} has no property '${propertyName}'.`)
      continue
    }
    given.add(property.name)
    if (property.kind === 'scalar') {
      if (property.name === KEY) {
        if (mode !== 'create' && String(value).toLowerCase() !== record.key) fail(name, 'The key of an entity cannot be changed.')
        continue
      }
      // Core.Computed in $metadata: the value is the rules' alone, and a client's is ignored
      // (OData 4.01 Part 1 §11.4.3), so an entity read with $select=* can be sent back as it is.
      if (isComputed(entity, property.name)) continue
      if (property.foreignKeyOf) {
        bindReference(context, property.foreignKeyOf, record, value, name, fail)
        continue
      }
      const parsed = parseClientValue(property, value)
      if ('problem' in parsed) fail(name, `${property.name} ${parsed.problem}.`)
      else record.values[property.name] = parsed.value
      continue
    }
    if (property.kind === 'reference') {
      if (changesReferenced(value)) fail(name, referenceWithProperties(property.target))
      else if (!isBind && value !== null && !isObject(value)) fail(name, bareReference(context, name, property))
      else if (bindsReference(isBind, value)) bindReference(context, property, record, isBind || value === null ? value : (referenceId(value) ?? (value as Record<string, unknown>)[KEY]), name, fail)
      else if (mode === 'create') record.nested.push({ property: property.name, create: bindCreate(context, property.target, value, `${path}${name}/`, failures) })
      else fail(name, `Nested entities can only be created together with their parent (deep insert); bind an existing one with ${name}@odata.bind.`)
      continue
    }
    // A collection: deep insert of new members, or binding existing ones.
    if (!Array.isArray(value)) {
      fail(name, `${property.name} expects an array.`)
      continue
    }
    if (mode !== 'create') {
      fail(name, `${property.name} cannot be changed through its parent; write to ${property.target.setName} instead.`)
      continue
    }
    // One failure for all of them: a collection of numbers is one mistake, not one per member.
    const notObjects = isBind ? 0 : value.filter((item) => !isObject(item)).length
    if (notObjects > 0) {
      const members = notObjects === 1 ? '1 member that is not a JSON object' : `${notObjects} members that are not JSON objects`
      fail(name, `${property.name} holds ${members}: each member is a new ${property.target.name}, as an object; bind existing ones with ${name}${BIND}.`)
      continue
    }
    const bound: string[] = []
    value.forEach((item, i) => {
      const id = isBind ? item : referenceId(item)
      if (id !== undefined) {
        const key = keyFromBinding(context, id, property.target)
        if (!key) fail(`${name}/${i}`, `'${String(id)}' does not address a ${property.target.name}.`)
        else bound.push(key)
        return
      }
      if (changesReferenced(item)) {
        fail(`${name}/${i}`, referenceWithProperties(property.target))
        return
      }
      const member = bindCreate(context, property.target, item, `${path}${name}/${i}/`, failures)
      if (namesAnotherParent(member, property.inverse.name, record.key)) {
        const inverse = context.naming.toPublic(property.inverse.name)
        fail(`${name}/${i}/${inverse}`, `A ${property.target.name} created in ${name} belongs to the ${entity.name} it is nested in; its ${inverse} cannot name another one.`)
      }
      record.nested.push({ property: property.name, create: member })
    })
    if (bound.length > 0) record.members.push({ property: property.name, keys: bound })
  }
  if (mode === 'put') {
    for (const property of entity.properties.values()) {
      if (given.has(property.name) || property.kind === 'collection' || property.name === KEY) continue
      if (isComputed(entity, property.name) || (property.kind === 'scalar' && property.foreignKeyOf)) continue
      if (property.kind === 'reference' && given.has(`${property.name}Guid`)) continue
      record.values[property.name] = null
    }
  }
}

/**
 * Whether a member deep-inserted into a collection sets its reference back to the parent
 * (`inverse`) to something else than that parent: a bind to another entity, a new one, or null.
 */
function namesAnotherParent(member: CreateOperation, inverse: string, parentKey: string | undefined): boolean {
  if (member.nested.some((nested) => nested.property === inverse)) return true
  return inverse in member.values && (parentKey === undefined || member.values[inverse] !== parentKey)
}

/** `#entityctl.Order`, or a URL ending so (`…/$metadata#entityctl.Order`): the entity's own type, as we have no derived ones. */
function namesType(value: unknown, entity: EntityModel): boolean {
  return typeof value === 'string' && value.slice(value.lastIndexOf('#') + 1) === `${DEFAULT_NAMESPACE}.${entity.name}` && value.includes('#')
}

/** A property the rules or the plugin compute: virtual, or persisted and kept by a computed rule. */
function isComputed(entity: EntityModel, name: string): boolean {
  const property = entity.properties.get(name)
  return entity.rules.computed.has(name) || (property?.kind === 'scalar' && Boolean(property.decl.virtual))
}

function bindReference(
  context: BodyContext,
  reference: ReferenceProperty,
  record: Target,
  value: unknown,
  name: string,
  fail: (target: string, message: string) => void,
): void {
  if (value === null) {
    record.values[reference.name] = null
    return
  }
  const key = keyFromBinding(context, value, reference.target)
  if (!key) {
    fail(name, `'${String(value)}' does not address a ${reference.target.name} of this service: use "${reference.target.setName}(<Guid>)", "${context.serviceRoot}${reference.target.setName}(<Guid>)" or the Guid.`)
    return
  }
  record.values[reference.name] = key
}

/**
 * Counts the entities a body creates or binds, nested ones included, before any is built, and
 * refuses the body at the first limit it passes. Collections are measured before their members
 * are visited and the count stops at the limit, so a body of 200,000 members costs no more
 * than one at the limit. Only navigation properties are followed: assign reports the rest.
 */
export function checkBodyLimits(naming: NamingPolicy, limits: BodyLimits, entity: EntityModel, body: unknown): void {
  const { maxEntities, maxCollectionMembers } = limits
  let entities = 0
  const count = (added: number) => {
    entities += added
    if (entities > maxEntities) throw RequestError.bodyLimitExceeded('ApiOptions:MaxBodyEntities', maxEntities, `the body holds more than ${maxEntities} entities, nested ones included`)
  }
  const pending: Array<{ entity: EntityModel; body: unknown; path: string }> = [{ entity, body, path: '' }]
  count(1)
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (!isObject(next.body)) continue
    const properties = publicProperties(next.entity, naming)
    for (const [name, value] of Object.entries(next.body)) {
      const property = properties.get(propertyNameOf(name))
      if (property?.kind === 'reference' && isObject(value) && !bindsReference(boundProperty(name) !== undefined, value)) {
        count(1)
        pending.push({ entity: property.target, body: value, path: `${next.path}${name}/` })
      }
      if (property?.kind !== 'collection' || !Array.isArray(value)) continue
      if (value.length > maxCollectionMembers) {
        throw RequestError.bodyLimitExceeded('ApiOptions:MaxCollectionMembers', maxCollectionMembers, `${next.path}${name} holds ${value.length} members`)
      }
      if (boundProperty(name) !== undefined) {
        count(value.length)
        continue
      }
      value.forEach((member, i) => {
        if (!isObject(member)) return
        count(1)
        if (referenceId(member) !== undefined) return
        pending.push({ entity: property.target, body: member, path: `${next.path}${name}/${i}/` })
      })
    }
  }
}

/** `"Customer": "<Guid>"`: neither a reference nor a new entity; the message shows the forms that bind one. */
function bareReference(context: BodyContext, name: string, reference: ReferenceProperty): string {
  const set = reference.target.setName
  const foreignKey = context.naming.toPublic(`${reference.name}Guid`)
  return `${name} is a navigation to one ${reference.target.name}: bind it with "${name}${BIND}": "${set}(<Guid>)", "${foreignKey}": "<Guid>" or "${name}": {"@id": "${set}(<Guid>)"}, not a bare value.`
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * What a create's body writes besides the posted entity, found as assign() finds them, for
 * authorize.ts to check before anything is written: the entities it creates (deep insert), and
 * the existing ones it binds into a collection, whose reference to their parent it changes.
 *   { "Number": 7, "Lines": [{ "Quantity": 1 }] }          →  created: [{ OrderLine, "Lines/0" }]
 *   { "Name": "Ada", "Orders@odata.bind": ["Orders(…)"] }  →  bound: [{ Order, "Orders@odata.bind/0" }]
 *   { "Name": "Ada", "Orders": [{ "@id": "Orders(…)" }] }   →  bound: [{ Order, "Orders/0" }]
 */
export function nestedWrites(naming: NamingPolicy, entity: EntityModel, body: unknown, path = ''): NestedWrites {
  const at = (name: string) => (path ? `${path}/${name}` : name)
  const found: NestedWrites = { created: [], bound: [] }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return found
  const properties = publicProperties(entity, naming)
  const nested = (target: EntityModel, value: unknown, where: string) => {
    found.created.push({ entity: target, path: where })
    const inner = nestedWrites(naming, target, value, where)
    found.created.push(...inner.created)
    found.bound.push(...inner.bound)
  }
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    const boundName = boundProperty(name)
    if (boundName !== undefined) {
      const property = properties.get(boundName)
      if (property?.kind === 'collection' && Array.isArray(value)) value.forEach((_, i) => found.bound.push({ entity: property.target, path: at(`${name}/${i}`) }))
      continue
    }
    if (name.includes('@')) continue // annotations
    const property = properties.get(name)
    if (property?.kind === 'reference' && !bindsReference(false, value)) nested(property.target, value, at(name))
    if (property?.kind !== 'collection' || !Array.isArray(value)) continue
    value.forEach((item, i) => {
      // {"@id": …}, the 4.01 form of a bind: the member moves, as with @odata.bind.
      if (referenceId(item) === undefined) nested(property.target, item, at(`${name}/${i}`))
      else found.bound.push({ entity: property.target, path: at(`${name}/${i}`) })
    })
  }
  return found
}

/** The bind the service's messages show: 4.0's, which 4.01 reads too. */
const BIND = '@odata.bind'

/** `Customer@odata.bind` (4.01: `Customer@bind`) names the property Customer. */
function propertyNameOf(bodyName: string): string {
  return boundProperty(bodyName) ?? bodyName
}

/** A reference's value that binds an existing entity (or none) rather than creating one. */
function bindsReference(isBind: boolean, value: unknown): boolean {
  return isBind || value === null || isKeyOnly(value) || referenceId(value) !== undefined
}

/**
 * The id of an entity reference, `{"@id": "Customers(<guid>)"}` (`@odata.id` in 4.0 bodies):
 * OData JSON 4.01 §8.5 binds an existing entity so, where 4.0 wrote `Customer@odata.bind`.
 * Undefined for any other value.
 */
export function referenceId(value: unknown): unknown {
  if (!isObject(value) || Object.keys(value).some((name) => !name.startsWith('@'))) return undefined
  return value['@id'] ?? value['@odata.id']
}

/** An entity reference with properties besides: a bind that would also change the bound entity (a deep update). */
function changesReferenced(value: unknown): boolean {
  return isObject(value) && ('@id' in value || '@odata.id' in value) && referenceId(value) === undefined
}

function referenceWithProperties(target: EntityModel): string {
  return `An entity reference (@id) binds an existing ${target.name} and cannot change it in the same body; write its properties to ${target.setName}(<Guid>).`
}

function isKeyOnly(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).filter((k) => !k.startsWith('@')).join() === KEY
}

/** Longer than any URL of an entity: such a text is not one, and the pattern below need not scan it. */
const MAX_BINDING_CHARS = 2048

/** "Customers(<guid>)", "Customers/<guid>", a URL of this service ending so, or a bare Guid. */
export function keyFromBinding(context: { readonly model: Model; readonly serviceRoot: string }, value: unknown, target: EntityModel): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_BINDING_CHARS) return undefined
  if (GUID_PATTERN.test(value)) return value.toLowerCase()
  // An absolute URL names its service: another one's entity is not ours, whatever its path says.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && !value.toLowerCase().startsWith(context.serviceRoot.toLowerCase())) return undefined
  const match = /([A-Za-z_][A-Za-z0-9_]*)(?:\((?:Guid=)?'?([0-9a-fA-F-]{36})'?\)|\/([0-9a-fA-F-]{36}))\/?$/.exec(value)
  if (!match) return undefined
  const entity = context.model.sets.get(match[1])
  const key = (match[2] ?? match[3]).toLowerCase()
  return entity === target && GUID_PATTERN.test(key) ? key : undefined
}
