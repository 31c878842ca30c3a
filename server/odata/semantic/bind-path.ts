// Binds the resource path to what it addresses: the service document, $metadata, an entity
// set, one entity (by key, in parentheses or as a segment), a navigation from an entity, a
// count, or a method (static on a set, or bound to an entity). A type cast to the entity's own
// type (`Orders/entityctl.Order`) may follow a set, an entity or a navigation: see castSegment.
//   Orders(8c9c…)/Lines  →  { kind: 'collection', entity: OrderLine, parent: { Order.Lines, 8c9c… } }
//   Orders(8c9c…)/Lines(41d0…)  →  { kind: 'entity', entity: OrderLine, key: 41d0…, parent: { Order.Lines, 8c9c… } }

import { QueryError, RequestError, ServiceError } from '../../errors.ts'
import type { MethodDecl } from '../../model/declarations.ts'
import type { EntityModel, Model, ScalarProperty } from '../../model/model.ts'
import type { ParentLink } from './bound.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import { closestName } from '../../errors.ts'
import { GUID_PATTERN } from '../../persistence/guid.ts'
import type { NameSegmentSyntax, PathSegmentSyntax, ResourcePathSyntax } from '../parser/syntax.ts'
import { publicProperties } from './bind-context.ts'


export type Target =
  | { readonly kind: 'serviceDocument' }
  | { readonly kind: 'metadata' }
  | { readonly kind: 'collection'; readonly entity: EntityModel; readonly parent?: ParentLink; readonly count: boolean; readonly ref?: boolean }
  | { readonly kind: 'entity'; readonly entity: EntityModel; readonly key: string; readonly parent?: ParentLink; readonly ref?: boolean }
  | {
      /** One structural property of an entity, `Customers(<key>)/Name`, or its raw value with `/$value`. */
      readonly kind: 'property'
      readonly entity: EntityModel
      readonly key: string
      readonly parent?: ParentLink
      readonly property: ScalarProperty
      readonly raw: boolean
    }
  | {
      readonly kind: 'method'
      readonly entity: EntityModel
      readonly name: string
      readonly method: MethodDecl
      /** The entity an instance method is called on. */
      readonly key?: string
      /** Reached as a member of this navigation (`Customers(k)/Orders(m)/Close`): the call needs it to be one. */
      readonly parent?: ParentLink
      /** Parameters written inline, `OpenSince(before=2024-01-01)`. */
      readonly inline: NameSegmentSyntax['args']
    }

export function bindPath(model: Model, naming: NamingPolicy, path: ResourcePathSyntax, namespace: string): Target {
  const segments = [...path.segments]
  if (segments.length === 0) return { kind: 'serviceDocument' }
  const first = segments.shift()!
  if (first.kind === 'metadata') {
    if (segments.length) throw RequestError.notFound('Nothing follows $metadata.')
    return { kind: 'metadata' }
  }
  if (first.kind !== 'name') throw RequestError.notFound(`A path starts with an entity set name.`)
  const entity = model.sets.get(first.name)
  if (!entity) {
    const hint = closestName(first.name, [...model.sets.keys()])
    throw RequestError.notFound(`No entity set '${first.name}'${hint ? `; did you mean '${hint}'?` : '.'}`)
  }
  let key: string | undefined
  const keyed = first.args !== undefined ? first : castSegment(model, entity, segments, naming, namespace)
  if (keyed?.args !== undefined) key = keyOf(keyed, entity)
  else if (segments[0]?.kind === 'key') key = literalKey(segments.shift()!, entity)
  if (key) castSegment(model, entity, segments, naming, namespace)

  if (segments.length === 0) return key ? { kind: 'entity', entity, key } : { kind: 'collection', entity, count: false }
  const next = segments.shift()!
  if (next.kind === 'count') {
    if (key) throw RequestError.notFound('$count follows a collection, not a single entity.')
    if (segments.length) throw RequestError.notFound('Nothing may follow $count.')
    return { kind: 'collection', entity, count: true }
  }
  if (next.kind === 'ref') return key ? { kind: 'entity', entity, key, ref: true } : { kind: 'collection', entity, count: false, ref: true }
  if (next.kind !== 'name') throw RequestError.notFound(`Unexpected segment after ${entity.setName}.`)
  const name = next.name.startsWith(`${namespace}.`) ? next.name.slice(namespace.length + 1) : next.name
  const method = findMethod(entity, name, naming)
  if (method) {
    if (segments.length) throw RequestError.notFound(`Nothing may follow the method ${name}.`)
    if (method.decl.static && key) throw RequestError.notFound(`${entity.setName}/${name} is called on the set, not on one entity.`)
    if (!method.decl.static && !key) throw RequestError.notFound(`${name} is called on one entity: ${entity.setName}(<Guid>)/${name}.`)
    return { kind: 'method', entity, name: method.name, method: method.decl, key, inline: next.args }
  }
  if (!key) {
    const names = [...entity.methods.keys()].filter((m) => entity.methods.get(m)!.static).map((m) => naming.toPublic(m))
    const hint = closestName(name, names)
    throw RequestError.notFound(`${entity.setName} has no method '${name}'${hint ? `; did you mean '${hint}'?` : names.length ? `; its methods: ${names.join(', ')}.` : '.'}`)
  }
  const navigation = publicProperties(entity, naming).get(name)
  if (!navigation) throw RequestError.notFound(`${entity.setName} has no property, navigation property or method '${name}'.`)
  if (navigation.kind === 'scalar') return propertyTarget(entity, key, undefined, navigation, segments)
  const parent: ParentLink = { navigation, key }
  if (navigation.kind === 'collection') {
    const keyed = next.args !== undefined ? next : castSegment(model, navigation.target, segments, naming, namespace)
    const member = keyed?.args !== undefined ? keyOf(keyed, navigation.target) : segments[0]?.kind === 'key' ? literalKey(segments.shift()!, navigation.target) : undefined
    if (member) return memberTarget(model, navigation.target, member, parent, naming, namespace, segments)
  } else if (next.args !== undefined) {
    throw RequestError.notFound(`${name} is a single entity: no key follows it.`)
  } else {
    castSegment(model, navigation.target, segments, naming, namespace)
  }
  const rest = segments.shift()
  if (navigation.kind === 'reference') {
    if (rest?.kind === 'name' && !rest.args) {
      const property = publicProperties(navigation.target, naming).get(rest.name)
      if (property?.kind === 'scalar') return propertyTarget(navigation.target, '', parent, property, segments)
    }
    refuseSecondNavigation(navigation.target, rest, naming)
    if (segments.length > 0 || (rest && rest.kind !== 'ref')) throw RequestError.notFound(`${name} is a single entity: a property, or $ref, may follow it.`)
    return { kind: 'entity', entity: navigation.target, key: '', parent, ref: Boolean(rest) }
  }
  if (segments.length > 0 || (rest && rest.kind !== 'count' && rest.kind !== 'ref')) throw RequestError.notFound('Paths may follow one navigation from an entity.')
  return { kind: 'collection', entity: navigation.target, parent, count: rest?.kind === 'count', ref: rest?.kind === 'ref' }
}

/**
 * One member of a collection navigation by its key, `Customers(k)/Orders(m)` or
 * `Customers(k)/Orders/m` (the paths OpenUI5 reads a row of a relative list by): the entity,
 * one of its properties, its reference, or one of its bound methods. The read finds it only
 * among the parent's members; a method is called once the read has found it there.
 */
function memberTarget(model: Model, entity: EntityModel, key: string, parent: ParentLink, naming: NamingPolicy, namespace: string, rest: PathSegmentSyntax[]): Target {
  castSegment(model, entity, rest, naming, namespace)
  const next = rest.shift()
  if (next?.kind === 'name') {
    // Its bound methods too: an action on a row of a relative list (OpenUI5 calls Customers(k)/Orders(m)/entityctl.Close).
    const method = findMethod(entity, next.name.startsWith(`${namespace}.`) ? next.name.slice(namespace.length + 1) : next.name, naming)
    if (method && !method.decl.static && rest.length === 0) return { kind: 'method', entity, name: method.name, method: method.decl, key, parent, inline: next.args }
    const property = next.args ? undefined : publicProperties(entity, naming).get(next.name)
    if (property?.kind === 'scalar') return propertyTarget(entity, key, parent, property, rest)
  }
  refuseSecondNavigation(entity, next, naming)
  if (rest.length > 0 || (next && next.kind !== 'ref')) throw RequestError.notFound(`${entity.setName}(${key}) is reached through ${parent.navigation.name}: a property, an instance method or $ref may follow it.`)
  return { kind: 'entity', entity, key, parent, ref: Boolean(next) }
}

/**
 * A type cast (OData 4.01 URL Conventions §4.11): a qualified type name after a set, an entity or
 * a navigation restricts it to that type or a type derived from it. The model has no derived
 * types, so a cast to the entity's own type changes nothing and is taken off `segments`;
 * a cast to any other type is 404 saying so. Returns the cast, whose parentheses may hold the
 * key that follows it (`Orders/entityctl.Order(<Guid>)`), or undefined when none comes next
 * (a qualified name of a bound method is left for the method).
 */
function castSegment(model: Model, entity: EntityModel, segments: PathSegmentSyntax[], naming: NamingPolicy, namespace: string): NameSegmentSyntax | undefined {
  const segment = segments[0]
  if (segment?.kind !== 'name' || !segment.name.includes('.')) return undefined
  const own = `${namespace}.${entity.name}`
  if (segment.name === own) {
    segments.shift()
    return segment
  }
  const local = segment.name.startsWith(`${namespace}.`) ? segment.name.slice(namespace.length + 1) : undefined
  if (local !== undefined && findMethod(entity, local, naming)) return undefined
  if (local !== undefined && model.entities.has(local)) {
    throw RequestError.notFound(`The type cast ${segment.name} does not apply to ${entity.setName}, whose type is ${own}: no type derives from it, so ${own} is the only cast it takes.`)
  }
  throw RequestError.notFound(`${segment.name} is neither a type of this service nor a method of ${entity.setName}; a type cast after ${entity.setName} names its type, ${own}.`)
}

/**
 * `Orders(k)/Customer/Orders`: a navigation from the end of a navigation is valid OData this
 * service does not follow yet, so 501 (as for every such feature), not the 404 of a wrong name.
 */
function refuseSecondNavigation(entity: EntityModel, segment: PathSegmentSyntax | undefined, naming: NamingPolicy): void {
  if (segment?.kind !== 'name') return
  const property = publicProperties(entity, naming).get(segment.name)
  if (!property || property.kind === 'scalar') return
  throw new ServiceError('NotImplemented', `A path follows one navigation: '${segment.name}' after another is valid OData this service does not support yet; address ${entity.setName}(<key>)/${segment.name} instead.`)
}

/** `Customers(<key>)/Name`, `…/Name/$value`; nothing else may follow a structural property. */
function propertyTarget(entity: EntityModel, key: string, parent: ParentLink | undefined, property: ScalarProperty, rest: PathSegmentSyntax[]): Target {
  const after = rest.shift()
  if (rest.length > 0 || (after && after.kind !== 'value')) {
    throw RequestError.notFound(`${entity.setName}.${property.name} is a property: only /$value may follow it.`)
  }
  return { kind: 'property', entity, key, parent, property, raw: Boolean(after) }
}

function findMethod(entity: EntityModel, name: string, naming: NamingPolicy) {
  for (const [declared, decl] of entity.methods) if (naming.toPublic(declared) === name) return { name: declared, decl }
  return undefined
}

function keyOf(segment: NameSegmentSyntax, entity: EntityModel): string {
  const args = segment.args!
  if (args.length !== 1 || (args[0].name !== undefined && args[0].name !== 'Guid' && args[0].name !== 'guid')) {
    throw QueryError.invalid(`${entity.setName}(…) takes the entity's Guid: ${entity.setName}(<guid>) or ${entity.setName}(Guid=<guid>).`)
  }
  const value = args[0].value
  if (value.kind === 'alias') {
    throw new ServiceError('NotImplemented', `A parameter alias as a key (${value.name}) is valid OData this service does not support yet; write the Guid: ${entity.setName}(<Guid>).`)
  }
  const text = String(value.value)
  if (!GUID_PATTERN.test(text)) throw notAGuid(value.text, entity)
  return text.toLowerCase()
}

function literalKey(segment: PathSegmentSyntax, entity: EntityModel): string {
  const value = segment.kind === 'key' ? segment.value : undefined
  const text = value ? String(value.value) : ''
  if (!GUID_PATTERN.test(text)) throw notAGuid(value?.text ?? '', entity)
  return text.toLowerCase()
}

/** A key as written, quoted once: `1` → '1', and a string literal `'abc'` as it is. */
function notAGuid(written: string, entity: EntityModel): ServiceError {
  const shown = /^'.*'$/.test(written) ? written : `'${written}'`
  return QueryError.invalid(`${shown} is not a Guid; keys of ${entity.setName} are Guids.`)
}
