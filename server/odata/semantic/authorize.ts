// Authorization, one stage for every request (decisions.md, "Roles and permissions"). The
// handlers bind a request to the model, hand the bound request here, and only then run SQL.
// What the request needs is read off the bound request itself, which is all the SQL compiler
// sees, so nothing a statement touches escapes the check:
//   a read          read on the entity set, on both ends of a navigation (Orders(k)/Customer
//                   needs read on Order and on Customer), and on every entity that $expand,
//                   $select paths, and the paths of $filter, $orderby, $compute and $apply go through;
//   a create        create on the entity, and on every entity nested in the body (deep insert);
//                   update on every existing entity it binds into a collection (it changes its parent);
//   an update       update; a delete: delete;
//   a bind          read on the entity type of each existing entity a create or update points a
//                   reference at (`Customer@odata.bind`, `CustomerGuid`, {"@id": …}, a $ref link,
//                   the parent of a create through its collection) or binds into a collection
//                   (`Orders@odata.bind`, `Orders: [{"@id": …}]`, POST Customers(k)/Orders/$ref):
//                   naming an entity is reaching it, as with a method's parameter, and whether it
//                   exists is answered only after;
//   a method        execute:<name>; read on the entity type of each entity a parameter names
//                   (p.reference, p.many: naming an entity is reaching it, and whether it
//                   exists is answered only after); for an entity result what reading it needs;
//   a write's reply what its $expand reaches; an update's reply that carries the entity
//                   ($select, $expand, return=representation) read on it too: it answers with
//                   what is stored, not only what was sent, so `PATCH Customers(k)?$select=Name`
//                   with {} would otherwise read what update alone does not grant (a create's
//                   reply is the entity its caller just made, shown without read);
//   a workflow's commit what each stored plan's writes and modify methods need, again, with the
//                   access of then;
//   granting full access (User.HasFullAccess) full access, whatever else the caller holds;
//   granting roles  only what the caller holds (auth/grant-rules.ts, when the plan is applied:
//                   only the data says what a role gives).
// A caller with full access passes every check. The switches are exhaustive: a new kind of
// request, or a new node of the bound tree, does not compile until it says what it needs.
// test/auth/route-permissions.test.ts sends every route as principals lacking each permission.

import type { AccessContext } from '../../auth/access-context.ts'
import { can } from '../../auth/access-context.ts'
import { AuthError } from '../../errors.ts'
import type { MethodDecl, Permission } from '../../model/declarations.ts'
import type { EntityModel, Model, ReferenceProperty } from '../../model/model.ts'
import type { CreateOperation, WritePlan } from '../../writes/write-plan.ts'
import type { BoundApplyStage, BoundCollectionRead, BoundEntityByKey, BoundEntityRead, BoundExpression, BoundOrderby } from './bound.ts'

/** One permission a request needs, and what in the request needs it (the 403 names both). */
export interface Need {
  readonly entity: EntityModel
  readonly permission: Permission
  /** What needs it, as the message's subject: "Reading Orders(…)/Customer", "$expand of Order.Lines". */
  readonly by: string
}

/** An entity a create's body writes besides the one posted, and where in the body. */
export interface NestedWrite {
  readonly entity: EntityModel
  /** Where the nested entity is in the body, as in "Lines/0" or "Lines@odata.bind/0". */
  readonly path: string
}

export interface NestedWrites {
  /** Entities created with it (deep insert). */
  readonly created: NestedWrite[]
  /** Existing entities bound into its collections (`Orders@odata.bind`): each one's reference to its parent changes. */
  readonly bound: NestedWrite[]
}

export type BoundRead = BoundCollectionRead | BoundEntityByKey

/** A request bound to the model, as far as authorization looks at it. */
export type AuthorizationRequest =
  /** The service document and $metadata: they describe the model and reach no data. */
  | { readonly kind: 'model' }
  /** A collection, its $count, one entity, or a navigation from one entity, with the query options. */
  | { readonly kind: 'read'; readonly read: BoundRead }
  /** Every row of an entity outside the OData routes (GET /api/roles/tree). */
  | { readonly kind: 'readAll'; readonly entity: EntityModel; readonly by: string }
  | { readonly kind: 'create'; readonly entity: EntityModel; readonly nested: NestedWrites; readonly reply: BoundEntityRead }
  /** `answered`: the reply carries the entity, read back from what is stored. */
  | { readonly kind: 'update'; readonly entity: EntityModel; readonly reply: BoundEntityRead; readonly answered: boolean }
  | { readonly kind: 'delete'; readonly entity: EntityModel }
  | { readonly kind: 'execute'; readonly entity: EntityModel; readonly method: string; readonly named: readonly NamedByParameter[]; readonly result?: BoundRead }

/** An entity type a method's parameter names one or more entities of (a p.reference or p.many given a value). */
export interface NamedByParameter {
  /** The parameter's name: public in a request, declared in a stored plan. */
  readonly parameter: string
  readonly entity: EntityModel
}

/**
 * The entity types a call's p.reference and p.many parameters name entities of (parameters by
 * declared name): those given a value, as null or an empty list names nothing.
 */
export function namedByParameters(model: Model, method: MethodDecl | undefined, params: Readonly<Record<string, unknown>>): NamedByParameter[] {
  const named: NamedByParameter[] = []
  for (const [name, decl] of Object.entries(method?.params ?? {})) {
    const value = params[name]
    if (decl.kind === 'scalar' || value === null || value === undefined || (Array.isArray(value) && value.length === 0)) continue
    const entity = model.entities.get(decl.target)
    if (entity) named.push({ parameter: name, entity })
  }
  return named
}

/** Allows the request, or throws 403 naming the first permission it needs and the caller lacks. */
export function authorize(access: AccessContext | undefined, request: AuthorizationRequest): void {
  if (!access) throw AuthError.missingCredentials()
  if (access.fullAccess) return
  for (const need of needsOf(request)) demand(access, need)
}

/**
 * One need checked on its own: for what only the data decides, after authorize() allowed the
 * request (a delete's cascades reach the members it finds).
 */
export function demand(access: AccessContext | undefined, need: Need): void {
  if (!access) throw AuthError.missingCredentials()
  if (!can(access, need.entity.name, need.permission)) {
    throw AuthError.forbidden(`${need.by} needs the ${need.permission} permission on ${need.entity.name}, which your responsibilities do not grant.`)
  }
}

/** Every permission the request needs, in the order the request names them. */
export function needsOf(request: AuthorizationRequest): Need[] {
  const needs: Need[] = []
  const need = (entity: EntityModel, permission: Permission, by: string) => needs.push({ entity, permission, by })
  switch (request.kind) {
    case 'model':
      break
    case 'read':
      readNeeds(request.read, need)
      break
    case 'readAll':
      need(request.entity, 'read', request.by)
      break
    case 'create':
      need(request.entity, 'create', `Creating ${request.entity.setName}`)
      for (const nested of request.nested.created) need(nested.entity, 'create', `Creating ${nested.entity.setName} (deep insert at ${nested.path})`)
      // Binding an existing member names it (read, before anyone learns whether it exists) and
      // moves it to the new parent: a change of its reference, as a $ref link is.
      for (const bound of request.nested.bound) {
        need(bound.entity, 'read', `Binding ${bound.entity.setName} (at ${bound.path})`)
        need(bound.entity, 'update', `Binding ${bound.entity.setName} (at ${bound.path})`)
      }
      entityReadNeeds(request.reply, need)
      break
    case 'update':
      need(request.entity, 'update', `Changing ${request.entity.setName}`)
      if (request.answered) need(request.entity, 'read', `Answering a change of ${request.entity.setName} with the entity`)
      entityReadNeeds(request.reply, need)
      break
    case 'delete':
      need(request.entity, 'delete', `Deleting ${request.entity.setName}`)
      break
    case 'execute':
      need(request.entity, `execute:${request.method}`, `Calling ${request.entity.setName}/${request.method}`)
      for (const { parameter, entity } of request.named) need(entity, 'read', `Naming ${entity.setName} in the parameter '${parameter}' of ${request.entity.setName}/${request.method}`)
      if (request.result) readNeeds(request.result, need)
      break
    default:
      unknownKind(request)
  }
  return needs
}

/**
 * Full access passes every check, so only a caller who has it may grant it: update (or create)
 * on User, given to a helpdesk to disable users say, does not let its holders make themselves
 * or anyone else administrators. Only the values say it, so this reads the bound plan.
 */
export function authorizeGrants(access: AccessContext | undefined, plan: WritePlan): void {
  if (!access) throw AuthError.missingCredentials()
  if (access.fullAccess) return
  const grants = (entity: string, values: Readonly<Record<string, unknown>>) => entity === FULL_ACCESS.entity && values[FULL_ACCESS.property] === true
  const create = (operation: CreateOperation): boolean => grants(operation.entity, operation.values) || operation.nested.some((nested) => create(nested.create))
  for (const operation of plan.operations) {
    if ((operation.kind === 'create' && create(operation)) || (operation.kind === 'update' && grants(operation.entity, operation.values))) {
      throw AuthError.forbidden(`Setting ${FULL_ACCESS.entity}.${FULL_ACCESS.property} to true needs full access, which you do not have.`)
    }
  }
}

/** The flag that passes every check (system-entities.ts). */
const FULL_ACCESS = { entity: 'User', property: 'HasFullAccess' }

/**
 * What a planned write's references need (the header's "a bind"), checked once its body is
 * bound and before the plan is applied, so a missing and an existing entity get the same 403.
 */
export function authorizeBinds(access: AccessContext | undefined, model: Model, plan: WritePlan): void {
  if (!access) throw AuthError.missingCredentials()
  if (access.fullAccess) return
  for (const need of bindNeeds(model, plan)) demand(access, need)
}

/**
 * Read on the target of every reference a plan's creates and updates set to an entity (null
 * names none), and on the member a collection's `$ref` link names. A member created in its
 * parent's collection names the new parent: no bind.
 */
function bindNeeds(model: Model, plan: WritePlan): Need[] {
  const needs: Need[] = []
  const bound = (entityName: string, values: Readonly<Record<string, unknown>>, parentReference?: string) => {
    const entity = model.entities.get(entityName)
    for (const [name, value] of Object.entries(values)) {
      const property = entity?.properties.get(name)
      if (property?.kind !== 'reference' || value === null || value === undefined || name === parentReference) continue
      needs.push({ entity: property.target, permission: 'read', by: `Binding ${property.target.setName} to ${entity!.name}.${name}` })
    }
  }
  const create = (operation: CreateOperation, parentReference?: string) => {
    bound(operation.entity, operation.values, parentReference)
    for (const nested of operation.nested) {
      const property = model.entities.get(operation.entity)?.properties.get(nested.property)
      create(nested.create, property?.kind === 'collection' ? property.inverse.name : undefined)
    }
  }
  for (const operation of plan.operations) {
    if (operation.kind === 'create') create(operation)
    else if (operation.kind === 'update') {
      const { boundInto } = operation
      const member = model.entities.get(operation.entity)
      if (boundInto && member) needs.push({ entity: member, permission: 'read', by: `Binding ${member.setName} to ${boundInto.entity}.${boundInto.property}` })
      bound(operation.entity, operation.values)
    }
  }
  return needs
}

/** A stored plan applied again (a workflow's commit): what it needs, and no grant of full access past it. */
export function authorizePlan(access: AccessContext | undefined, model: Model, plan: WritePlan): void {
  if (!access) throw AuthError.missingCredentials()
  if (access.fullAccess) return
  for (const need of planNeeds(model, plan)) demand(access, need)
  authorizeGrants(access, plan)
}

/**
 * What applying a stored write plan needs, as the request that planned it needed: a workflow's
 * commit writes with the access its caller holds then, which may have lost what allowed a
 * request when it was sent (a role taken away since): a modify method's execute and read on
 * what its parameters name, and read on what the writes bind. Read methods change nothing: the
 * commit does not need them again.
 */
export function planNeeds(model: Model, plan: WritePlan): Need[] {
  const needs: Need[] = []
  const need = (name: string, permission: Permission, by: (entity: EntityModel) => string) => {
    const entity = model.entities.get(name)
    if (entity) needs.push({ entity, permission, by: by(entity) })
  }
  const create = (operation: CreateOperation) => {
    need(operation.entity, 'create', (entity) => `Creating ${entity.setName}`)
    for (const nested of operation.nested) create(nested.create)
    for (const member of operation.members) {
      const collection = model.entities.get(operation.entity)?.properties.get(member.property)
      if (collection?.kind === 'collection') {
        need(collection.target.name, 'read', (entity) => `Binding ${entity.setName} to ${operation.entity}.${member.property}`)
        need(collection.target.name, 'update', (entity) => `Binding ${entity.setName} to ${operation.entity}.${member.property}`)
      }
    }
  }
  for (const operation of plan.operations) {
    switch (operation.kind) {
      case 'create':
        create(operation)
        break
      case 'update':
        need(operation.entity, 'update', (entity) => `Changing ${entity.setName}`)
        break
      case 'delete':
        need(operation.entity, 'delete', (entity) => `Deleting ${entity.setName}`)
        break
      case 'call':
        if (operation.readOnly) break
        need(operation.entity, `execute:${operation.method}`, (entity) => `Calling ${entity.setName}/${operation.method}`)
        // What its parameters name, too: the plan holds the Guids, whatever may read them now.
        for (const { parameter, entity } of namedByParameters(model, model.entities.get(operation.entity)?.methods.get(operation.method), operation.params)) {
          need(entity.name, 'read', () => `Naming ${entity.setName} in the parameter '${parameter}' of ${model.entities.get(operation.entity)!.setName}/${operation.method}`)
        }
        break
      default:
        unknownKind(operation)
    }
  }
  return [...needs, ...bindNeeds(model, plan)]
}

type AddNeed = (entity: EntityModel, permission: Permission, by: string) => void

function readNeeds(bound: BoundRead, need: AddNeed): void {
  if (bound.parent) {
    // Orders(k)/Customer reads the order to find its customer, so it needs both.
    const { navigation } = bound.parent
    const path = `Reading ${navigation.entity.setName}(…)/${navigation.name}`
    need(navigation.entity, 'read', path)
    need(bound.entity, 'read', path)
  } else {
    need(bound.entity, 'read', `Reading ${bound.entity.setName}`)
  }
  entityReadNeeds(bound.read, need)
  if (bound.kind !== 'collection') return
  if (bound.filter) expressionNeeds(bound.filter, '$filter', need)
  orderbyNeeds(bound.orderby, '$orderby', need)
  for (const stage of bound.apply ?? []) applyNeeds(stage, need)
}

/**
 * What reading one entity's selection needs beyond the entity itself: the paths of the $compute
 * values it answers with (`Customer/Name as Buyer` reads the customer), and its expansions, all
 * the way down.
 */
function entityReadNeeds(read: BoundEntityRead, need: AddNeed): void {
  for (const item of read.computed ?? []) expressionNeeds(item.expression, '$compute', need)
  for (const expand of read.expand) {
    const { navigation } = expand
    need(navigation.target, 'read', `$expand of ${navigation.entity.name}.${navigation.name}`)
    entityReadNeeds(expand.read, need)
    if (expand.filter) expressionNeeds(expand.filter, `$filter in $expand of ${navigation.name}`, need)
    orderbyNeeds(expand.orderby, `$orderby in $expand of ${navigation.name}`, need)
  }
}

function orderbyNeeds(items: readonly BoundOrderby[], option: string, need: AddNeed): void {
  for (const item of items) expressionNeeds(item.expression, option, need)
}

function applyNeeds(stage: BoundApplyStage, need: AddNeed): void {
  switch (stage.kind) {
    case 'filter':
      expressionNeeds(stage.predicate, '$apply', need)
      break
    case 'compute':
      for (const item of stage.items) expressionNeeds(item.expression, '$apply', need)
      break
    case 'aggregate':
      for (const key of stage.groupBy) expressionNeeds(key.expression, '$apply', need)
      for (const aggregation of stage.aggregations) if (aggregation.expression) expressionNeeds(aggregation.expression, '$apply', need)
      break
    case 'orderby':
      orderbyNeeds(stage.items, '$apply', need)
      break
    case 'top':
    case 'skip':
      break
    default:
      unknownKind(stage)
  }
}

/** A path through references (Customer/Country) or into a collection (Lines/any(…)) reads each entity it passes. */
function expressionNeeds(expression: BoundExpression, option: string, need: AddNeed): void {
  const through = (via: readonly ReferenceProperty[]) => {
    for (const reference of via) need(reference.target, 'read', `${option} through ${reference.entity.name}.${reference.name}`)
  }
  switch (expression.kind) {
    case 'literal':
    case 'list':
    case 'aggregateRef':
    case 'search':
      break
    case 'property':
    case 'referenceKey':
      // The last reference of `Customer eq null` is a column of the entity itself.
      through(expression.via)
      break
    case 'binary':
      expressionNeeds(expression.left, option, need)
      expressionNeeds(expression.right, option, need)
      break
    case 'not':
    case 'negate':
      expressionNeeds(expression.operand, option, need)
      break
    case 'call':
      for (const arg of expression.args) expressionNeeds(arg, option, need)
      break
    case 'lambda':
      through(expression.via)
      need(expression.collection.target, 'read', `${option} through ${expression.collection.entity.name}.${expression.collection.name}`)
      if (expression.predicate) expressionNeeds(expression.predicate, option, need)
      break
    case 'count':
      through(expression.via)
      need(expression.collection.target, 'read', `${option} through ${expression.collection.entity.name}.${expression.collection.name}`)
      if (expression.filter) expressionNeeds(expression.filter, option, need)
      break
    default:
      unknownKind(expression)
  }
}

/** Unreachable while the switches are exhaustive; a kind added without its needs fails to compile. */
function unknownKind(value: never): never {
  throw new Error(`authorize.ts does not know what ${JSON.stringify((value as { kind?: string }).kind)} needs`)
}
