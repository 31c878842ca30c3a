// The write binder, beside the read binder: a request that writes (POST, PATCH, PUT, DELETE,
// an action or function) → a WritePlan (server/writes/write-plan.ts) and the bound read of its
// reply. Pure: names, types, references, deep inserts, If-Match, the reply's $select/$expand
// and every permission the request needs (authorize.ts, the stage reads use too) are settled
// here, so a request refused for any of them is refused before anything touches the database.
// What only the data can decide stays for when the plan is applied (server/writes/apply-plan.ts):
// whether the entity exists, whether its ETag still matches, which members a cascade reaches.

import type { AccessContext } from '../../auth/access-context.ts'
import { QueryError, RequestError, ServiceError } from '../../errors.ts'
import { KEY, writableOverApi, type CollectionProperty, type EntityModel, type Model, type ReferenceProperty } from '../../model/model.ts'
import type { MethodDecl } from '../../model/declarations.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import { writePlan, type CreateOperation, type WritePlan } from '../../writes/write-plan.ts'
import { declaredReturnType } from '../metadata/build-csdl.ts'
import { parseQueryOptions } from '../parser/query-options-parser.ts'
import type { QueryOptionsSyntax } from '../parser/syntax.ts'
import { authorize, authorizeBinds, authorizeGrants, namedByParameters, type BoundRead, type NamedByParameter } from '../semantic/authorize.ts'
import { createBindContext, type QueryLimits } from '../semantic/bind-context.ts'
import { bindCollectionRead, bindCompute, bindEntityRead, COLLECTION_OPTIONS, collectionOptionsIn, type DefaultSelect } from '../semantic/bind-read.ts'
import type { BoundCollectionRead, BoundEntityRead } from '../semantic/bound.ts'
import type { Target } from '../semantic/bind-path.ts'
import { applyList, selectList } from '../serializer/urls.ts'
import { bindCreateBody, bindUpdateBody, checkBodyLimits, keyFromBinding, nestedWrites, referenceId, type BodyContext, type BodyLimits } from './bind-body.ts'
import { bindParameters } from './bind-parameters.ts'

/** What binding a write needs of the service: the model, its naming, the limits. */
export interface WriteBinding {
  readonly model: Model
  readonly naming: NamingPolicy
  readonly query: QueryLimits
  readonly body: BodyLimits
  readonly defaultSelect: DefaultSelect
  /** The request's service root (`http://host/api/`), which absolute bind URLs must start with. */
  readonly serviceRoot: string
}

export type MethodTarget = Extract<Target, { kind: 'method' }>

/** A request that writes, as the route and the parser leave it. */
export type WriteRequest =
  | {
      readonly kind: 'create'
      readonly entity: EntityModel
      readonly body: unknown
      readonly options: QueryOptionsSyntax
      /** Prefer: return=representation: without $select, the reply is the whole entity. */
      readonly representation: boolean
      /** Created through a parent's collection: `POST Customers(k)/Orders` binds the new Order to k. */
      readonly parent?: { readonly navigation: CollectionProperty; readonly key: string }
    }
  | {
      readonly kind: 'update'
      readonly entity: EntityModel
      readonly key: string
      readonly mode: 'patch' | 'put'
      readonly body: unknown
      readonly ifMatch: string
      readonly ifNoneMatch: string
      readonly options: QueryOptionsSyntax
      /** Prefer: return=representation: without $select, the reply is the whole entity. */
      readonly representation: boolean
      /** The reply carries the entity ($select, $expand or return=representation, without return=minimal). */
      readonly answered: boolean
    }
  | { readonly kind: 'delete'; readonly entity: EntityModel; readonly key: string; readonly ifMatch: string; readonly ifNoneMatch: string; readonly options: QueryOptionsSyntax }
  /**
   * `$ref` writes: PUT `Orders(o)/Customer/$ref` or POST `Customers(k)/Orders/$ref` with
   * `{"@odata.id": "…"}` set a link; DELETE `Orders(o)/Customer/$ref` or
   * `Customers(k)/Orders/$ref?$id=Orders(o)` remove one. Either is a change of the entity that
   * holds the reference; `key` is the entity the path goes through, `member` the `$id`.
   */
  | { readonly kind: 'link'; readonly navigation: ReferenceProperty | CollectionProperty; readonly key: string; readonly body: unknown; readonly ifMatch: string }
  | { readonly kind: 'unlink'; readonly navigation: ReferenceProperty | CollectionProperty; readonly key: string; readonly member?: string; readonly ifMatch: string }
  | {
      readonly kind: 'call'
      readonly target: MethodTarget
      readonly httpMethod: string
      /** As requested, for a 405's message. */
      readonly path: string
      readonly body: unknown
      /** A bound method's precondition on the entity it is called on. */
      readonly ifMatch: string
      readonly options: QueryOptionsSyntax
    }

/** How a write answers, bound before it is applied. */
export type WriteReply =
  /**
   * The written entity (a create's or an update's), or the one entity a method returns.
   * `failsOnData`: reading it evaluates what can fail on the data (an expanded $filter's cast,
   * a plugin's virtual property), so it is read in the write's transaction, and its failure
   * undoes the write; any other reply is read after the write, at no extra round trip.
   */
  | {
      readonly kind: 'entity'
      readonly entity: EntityModel
      readonly read: BoundEntityRead
      /** The select list of its context URL, as a read of the same shape names it (urls.ts selectList). */
      readonly projection: readonly string[]
      readonly failsOnData: boolean
    }
  /** The entities a method returns, read as its query options ask. */
  | {
      readonly kind: 'entities'
      readonly entity: EntityModel
      readonly read: BoundCollectionRead
      /** The select list of its context URL, as a read of the same shape names it (urls.ts selectList, applyList). */
      readonly projection: readonly string[]
      readonly failsOnData: boolean
    }
  /** A value a method returns: its Edm type, and the type $metadata declares (an enumeration's name) for its context URL. */
  | { readonly kind: 'value'; readonly type: string; readonly declaredType: string }
  | { readonly kind: 'none' }

export interface BoundWrite {
  readonly plan: WritePlan
  readonly reply: WriteReply
}

export function bindWrite(binding: WriteBinding, request: WriteRequest, access: AccessContext | undefined): BoundWrite {
  switch (request.kind) {
    case 'create': {
      const { entity, body } = request
      requireSystemWritable(entity)
      const reply = bindEntityReply(replyBinding(binding, request.representation), entity, request.options, 'a write answers with one entity')
      // Measured before it is walked for what it creates: a body past the limits costs no more than one at them.
      checkBodyLimits(binding.naming, binding.body, entity, body)
      const nested = nestedWrites(binding.naming, entity, body)
      for (const written of [...nested.created, ...nested.bound]) requireSystemWritable(written.entity)
      authorize(access, { kind: 'create', entity, nested, reply: reply.read })
      const created = bindCreateBody(bodyContext(binding), entity, body)
      const plan = writePlan([request.parent ? throughParent(binding, created, request.parent) : created])
      authorizeBinds(access, binding.model, plan)
      authorizeGrants(access, plan)
      return { plan, reply }
    }
    case 'update': {
      const { entity, key, mode, body } = request
      requireSystemWritable(entity)
      const reply = bindEntityReply(replyBinding(binding, request.representation), entity, request.options, 'a write answers with one entity')
      const ifMatch = parseIfMatch(request.ifMatch)
      const ifNoneMatch = parseIfNoneMatch(request.ifNoneMatch)
      authorize(access, { kind: 'update', entity, reply: reply.read, answered: request.answered })
      const values = bindUpdateBody(bodyContext(binding), entity, key, body, mode)
      const plan = writePlan([{ kind: 'update', entity: entity.name, key, mode, values, ...(ifMatch ? { ifMatch } : {}), ...(ifNoneMatch ? { ifNoneMatch } : {}) }])
      authorizeBinds(access, binding.model, plan)
      authorizeGrants(access, plan)
      return { plan, reply }
    }
    case 'delete': {
      const { entity, key } = request
      requireSystemWritable(entity)
      // A DELETE answers with nothing, but its query options are a write's: bound, or refused.
      bindEntityReply(binding, entity, request.options, 'a write answers with one entity')
      const ifMatch = parseIfMatch(request.ifMatch)
      const ifNoneMatch = parseIfNoneMatch(request.ifNoneMatch)
      authorize(access, { kind: 'delete', entity })
      return { plan: writePlan([{ kind: 'delete', entity: entity.name, key, ...(ifMatch ? { ifMatch } : {}), ...(ifNoneMatch ? { ifNoneMatch } : {}) }]), reply: { kind: 'none' } }
    }
    case 'link':
    case 'unlink':
      return bindLinkWrite(binding, request, access)
    case 'call': {
      const { target, options } = request
      const { entity, method, name } = target
      const expected = method.kind === 'read' ? 'GET' : 'POST'
      // A HEAD is the GET of the headers alone (RFC 9110 §9.3.2): a function answers it.
      const asked = request.httpMethod === 'HEAD' ? 'GET' : request.httpMethod
      if (asked !== expected) throw RequestError.methodNotAllowed(request.httpMethod, request.path, [expected])
      const params = bindParameters(bodyContext(binding), method, request.httpMethod === 'POST' && request.body !== undefined ? request.body : {}, target.inline, options.custom, options.aliases)
      const reply = bindMethodReply(binding, target, options)
      const ifMatch = target.key ? parseIfMatch(request.ifMatch) : undefined
      // An entity result's reading is authorized with the call, before the method runs.
      authorize(access, { kind: 'execute', entity, method: name, named: namedByPublicParameters(binding, method, params), result: resultRead(reply) })
      const call = {
        kind: 'call' as const,
        entity: entity.name,
        method: name,
        ...(target.key ? { key: target.key } : {}),
        ...(ifMatch ? { ifMatch } : {}),
        params,
        readOnly: method.kind === 'read',
      }
      return { plan: writePlan([call]), reply }
    }
  }
}

/**
 * What a call's parameters name, by public name. Naming an entity needs read on its type, as
 * reaching it by a path does, so that a caller who may not read it cannot learn whether it exists.
 */
function namedByPublicParameters(binding: WriteBinding, method: MethodDecl, params: Readonly<Record<string, unknown>>): NamedByParameter[] {
  return namedByParameters(binding.model, method, params).map((named) => ({ ...named, parameter: binding.naming.toPublic(named.parameter) }))
}

/**
 * A `$ref` write as the update of the entity holding the reference: its reference set to the
 * linked entity (which must exist when applied) or cleared (when it points where the path says).
 * It needs the update permission on that entity, as a PATCH of the reference would, and read on
 * what it binds (authorizeBinds): the linked entity, or the member a collection's link names.
 */
function bindLinkWrite(binding: WriteBinding, request: Extract<WriteRequest, { kind: 'link' | 'unlink' }>, access: AccessContext | undefined): BoundWrite {
  const { navigation, key } = request
  const reference = navigation.kind === 'reference' ? navigation : navigation.inverse
  const holder = reference.entity
  requireSystemWritable(holder)
  const reply = bindEntityReply(binding, holder, parseQueryOptions(''), 'a $ref write answers with nothing')
  authorize(access, { kind: 'update', entity: holder, reply: reply.read, answered: false })
  const ifMatch = parseIfMatch(request.ifMatch)
  const path = `${navigation.entity.setName}(${key})/${binding.naming.toPublic(navigation.name)}/$ref`
  let holderKey: string
  let value: string | null
  let exists: { entity: string; key: string } | undefined
  let linkedTo: { property: string; key: string } | undefined
  let boundInto: { entity: string; property: string } | undefined
  if (request.kind === 'link') {
    const id = referenceId(request.body)
    const linked = keyFromBinding(binding, id, navigation.target)
    if (!linked) throw RequestError.invalid(`A link to ${path} is a body {"@odata.id": "${navigation.target.setName}(<Guid>)"}.`, '@odata.id')
    if (navigation.kind === 'reference') {
      ;[holderKey, value, exists] = [key, linked, { entity: navigation.target.name, key: linked }]
    } else {
      ;[holderKey, value, exists, boundInto] = [linked, key, { entity: navigation.entity.name, key }, { entity: navigation.entity.name, property: navigation.name }]
    }
  } else if (navigation.kind === 'reference') {
    ;[holderKey, value] = [key, null]
  } else {
    const member = keyFromBinding(binding, request.member, navigation.target)
    if (!member) throw RequestError.invalid(`Removing a link from ${path} names the member: ?$id=${navigation.target.setName}(<Guid>).`, '$id')
    ;[holderKey, value, linkedTo] = [member, null, { property: reference.name, key }]
  }
  const update = {
    kind: 'update' as const,
    entity: holder.name,
    key: holderKey,
    mode: 'patch' as const,
    values: { [reference.name]: value },
    ...(ifMatch ? { ifMatch } : {}),
    ...(exists ? { exists } : {}),
    ...(linkedTo ? { linkedTo } : {}),
    ...(boundInto ? { boundInto } : {}),
  }
  const plan = writePlan([update])
  authorizeBinds(access, binding.model, plan)
  return { plan, reply: { kind: 'none' } }
}

/** A create through a parent's collection: bound to the parent, which must exist when applied. */
function throughParent(binding: WriteBinding, created: CreateOperation, parent: { readonly navigation: CollectionProperty; readonly key: string }): CreateOperation {
  const { navigation, key } = parent
  const inverse = navigation.inverse.name
  const bound = created.values[inverse]
  if (typeof bound === 'string' && bound.toLowerCase() !== key.toLowerCase()) {
    const name = binding.naming.toPublic(inverse)
    throw RequestError.invalid(`${name}@odata.bind names another ${navigation.entity.name} than the one the new ${navigation.target.name} is created through (${navigation.entity.setName}(${key})/${binding.naming.toPublic(navigation.name)}).`, name)
  }
  return { ...created, values: { ...created.values, [inverse]: key }, parent: { entity: navigation.entity.name, key, property: navigation.name } }
}

/**
 * Binds the reply's query options as a read of one entity would: a write whose reply cannot be
 * given ($expand=Nope, $filter on one entity) is refused before it writes, not after. The
 * writer may lack read permission on what it wrote, and the reply shows it all the same; what
 * its $expand reaches is authorized with the write (authorize.ts).
 */
function bindEntityReply(binding: WriteBinding, entity: EntityModel, options: QueryOptionsSyntax, why: string): Extract<WriteReply, { kind: 'entity' }> {
  const forCollections = collectionOptionsIn(options)
  if (forCollections.length > 0) throw QueryError.invalid(`${forCollections[0]}: ${COLLECTION_OPTIONS} apply to collections; ${why}.`, forCollections[0])
  const context = createBindContext(binding.naming, binding.query, options.aliases)
  const range = context.nextRange(entity)
  const computed = bindCompute(context, { it: range, variables: new Map(), option: '$compute' }, options.compute)
  const read = bindEntityRead(context, range, options.select, options.expand, binding.defaultSelect, 1, range, computed)
  return { kind: 'entity', entity, read, projection: selectList(options, defaultKey(binding), read), failsOnData: evaluatesOnData(read) }
}

/**
 * Binds the reply's query options to what the method returns, before it runs. Entity results
 * are read through the query pipeline; a method that returns no entities takes none of the
 * system query options.
 */
function bindMethodReply(binding: WriteBinding, target: MethodTarget, options: QueryOptionsSyntax): WriteReply {
  const returns = target.method.returns
  if (returns?.kind === 'collection') {
    const entity = binding.model.entities.get(returns.target)!
    const read = bindCollectionRead(createBindContext(binding.naming, binding.query, options.aliases), entity, options, binding.defaultSelect)
    const failsOnData = Boolean(read.filter || read.orderby.length > 0 || read.apply?.length) || evaluatesOnData(read.read)
    const projection = read.apply ? applyList(read.apply, KEY) : selectList(options, defaultKey(binding), read.read)
    return { kind: 'entities', entity, read, projection, failsOnData }
  }
  if (returns?.kind === 'reference') {
    const entity = binding.model.entities.get(returns.target)!
    return { ...bindEntityReply({ ...binding, defaultSelect: 'Key' }, entity, options, `${target.name} returns one ${entity.name}`) }
  }
  const given = systemOptionsIn(options)
  if (given.length > 0) throw QueryError.invalid(`${given.join(', ')}: ${target.name} returns ${returns ? 'no entities' : 'nothing'}, so no query option applies to its answer.`, given[0])
  if (!returns) return { kind: 'none' }
  const type = edmName(returns.type)
  return { kind: 'value', type, declaredType: declaredReturnType(binding.model, binding.naming, target.entity, target.name) ?? type }
}

/**
 * A write asked for its representation answers with the whole entity where $select is absent,
 * whatever DefaultSelect says of reads: the client asked for the entity, not for its key
 * (plugins/README.md, "What the rules changed is visible to the client").
 */
function replyBinding(binding: WriteBinding, representation: boolean): WriteBinding {
  return representation ? { ...binding, defaultSelect: 'All' } : binding
}

/** What a reply without $select projects, for its context URL: the key's public name, or everything (undefined). */
function defaultKey(binding: WriteBinding): string | undefined {
  return binding.defaultSelect === 'Key' ? binding.naming.toPublic(KEY) : undefined
}

/** Whether a read evaluates expressions or plugin code, which the data can make fail. */
function evaluatesOnData(read: BoundEntityRead): boolean {
  if (read.virtuals.length > 0 || (read.computed?.length ?? 0) > 0) return true
  return read.expand.some((expand) => expand.filter !== undefined || expand.orderby.length > 0 || evaluatesOnData(expand.read))
}

/** An entity result's read, without its keys (the method gives them), for authorize.ts. */
function resultRead(reply: WriteReply): BoundRead | undefined {
  if (reply.kind === 'entities') return reply.read
  if (reply.kind === 'entity') return { kind: 'entity', entity: reply.entity, key: '', read: reply.read }
  return undefined
}

/** The system query options a request gives ($format aside, which only chooses the answer's format). */
function systemOptionsIn(options: QueryOptionsSyntax): string[] {
  const given: Array<[string, unknown]> = [
    ['$select', options.select], ['$expand', options.expand], ['$filter', options.filter], ['$orderby', options.orderby], ['$apply', options.apply],
    ['$compute', options.compute], ['$top', options.top], ['$skip', options.skip], ['$count', options.count], ['$search', options.search], ['$skiptoken', options.skiptoken],
  ]
  return given.filter(([, value]) => value !== undefined).map(([name]) => name)
}

function bodyContext(binding: WriteBinding): BodyContext {
  return { model: binding.model, naming: binding.naming, limits: binding.body, serviceRoot: binding.serviceRoot }
}

/** Entity tags as If-Match lists them (RFC 9110 13.1.1); undefined for none or `*` (any). */
export function parseIfMatch(header: string): readonly string[] | undefined {
  const text = header.trim()
  if (text === '' || text === '*') return undefined
  return entityTags(text, 'If-Match')
}

/**
 * Entity tags as If-None-Match lists them (RFC 9110 13.1.2), `['*']` for `*`: a change of an
 * entity whose ETag is among them, or of any existing one for `*`, is refused (412).
 */
export function parseIfNoneMatch(header: string): readonly string[] | undefined {
  const text = header.trim()
  if (text === '') return undefined
  return text === '*' ? ['*'] : entityTags(text, 'If-None-Match')
}

function entityTags(text: string, header: string): readonly string[] {
  const tags = text.split(',').map((tag) => tag.trim())
  const wrong = tags.find((tag) => !/^(W\/)?"[^"]*"$/.test(tag))
  if (wrong !== undefined) {
    throw RequestError.invalid(`${header} holds '${wrong}', which is not an entity tag: send the ETag the entity was read with (its @odata.etag, as W/"2.9f86d081884c") or *.`, header)
  }
  return tags
}

/** Responsibilities come from plugins: `responsibility sync` owns that table (writableOverApi). */
function requireSystemWritable(entity: EntityModel): void {
  if (!writableOverApi(entity)) {
    throw new ServiceError('MethodNotAllowed', `Responsibilities are read only here: plugins declare them and \`entityctl responsibility sync\` writes them; allowed: GET.`, { headers: { Allow: 'GET' } })
  }
}

function edmName(type: string): string {
  const map: Record<string, string> = {
    Integer: 'Edm.Int32', Decimal: 'Edm.Decimal', Double: 'Edm.Double', Boolean: 'Edm.Boolean', Date: 'Edm.Date',
    DateTimeOffset: 'Edm.DateTimeOffset', TimeOfDay: 'Edm.TimeOfDay', Guid: 'Edm.Guid',
  }
  return map[type] ?? 'Edm.String'
}
