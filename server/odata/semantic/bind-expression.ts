// Binds filter-like expressions ($filter, $orderby, $apply) to the model: resolves paths
// through references, lambdas over collections, types every node and types each literal
// after the operand it meets.
//   Customer/Country eq 'DE'  →  binary(eq, property(Customer→Country), literal(string 'DE'))

import { closestName, QueryError } from '../../errors.ts'
import type { EntityModel, ReferenceProperty, ScalarProperty } from '../../model/model.ts'
import { GUID_PATTERN } from '../../persistence/guid.ts'
import type { AliasSyntax, CallSyntax, ExpressionSyntax, LiteralSyntax, MemberSyntax } from '../parser/syntax.ts'
import { aType, EDM_TYPE_OF, type BoundAggregateRef, type BoundExpression, type BoundLiteral, type BoundProperty, type BoundReferenceKey, type Range, type ValueType } from './bound.ts'
import { resolveProperty, withoutTypeCasts, type BindContext } from './bind-context.ts'
import { DEFAULT_NAMESPACE } from '../metadata/build-csdl.ts'
import { bindPattern } from './bind-pattern.ts'
import { bindTemporal, durationLiteral } from './bind-temporal.ts'

export interface ExpressionScope {
  /** The entity the expression is about, where unqualified names and `$this` start. */
  readonly it: Range
  /** `$it` where it differs from `it`: in options nested in $expand, the resource path's instance. */
  readonly root?: Range
  /** Lambda variables in scope, innermost last. */
  readonly variables: ReadonlyMap<string, Range>
  /** After an aggregation, the names it introduced (they replace the entity's properties). */
  readonly applied?: ReadonlyMap<string, BoundAggregateRef>
  /** Aliases of $apply compute(), replaced by their expression where used. */
  readonly computed?: ReadonlyMap<string, BoundExpression>
  /** Where the expression is used, for messages: '$filter', '$orderby', '$apply'. */
  readonly option: string
}

const NUMERIC: ReadonlySet<ValueType> = new Set(['int', 'decimal', 'double'])

export function valueTypeOf(property: ScalarProperty): ValueType {
  switch (property.type) {
    case 'Integer': return 'int'
    case 'Decimal': return 'decimal'
    case 'Double': return 'double'
    case 'Boolean': return 'boolean'
    case 'Date': return 'date'
    case 'DateTimeOffset': return 'dateTimeOffset'
    case 'TimeOfDay': return 'timeOfDay'
    case 'Guid': return 'guid'
    default: return 'string'
  }
}

export function bindExpression(context: BindContext, scope: ExpressionScope, syntax: ExpressionSyntax): BoundExpression {
  switch (syntax.kind) {
    case 'literal':
      return bindLiteral(syntax, scope.option)
    case 'alias':
      return bindExpression(context, scope, aliasValue(context, syntax))
    case 'member':
      return bindMember(context, scope, syntax)
    case 'binary': {
      const left = bindExpression(context, scope, syntax.left)
      // The right of `in` is a list (or an alias holding one), which is no value of its own.
      if (syntax.op === 'in') return bindIn(context, scope, left, syntax.right)
      const right = bindExpression(context, scope, syntax.right)
      return bindBinary(syntax.op, left, right, scope.option)
    }
    case 'unary': {
      const operand = bindExpression(context, scope, syntax.operand)
      if (syntax.op === 'not') {
        expectType(operand, 'boolean', 'not', scope.option)
        return { kind: 'not', operand, type: 'boolean' }
      }
      // A duration changes its sign too (URL Conventions 4.01 §5.1.1.2.3).
      if (!NUMERIC.has(operand.type) && operand.type !== 'duration') throw QueryError.invalid(`In ${scope.option}, '-' needs a number or a duration, not ${aType(operand.type)}.`)
      return { kind: 'negate', operand, type: operand.type }
    }
    case 'call':
      return bindCall(context, scope, syntax)
    case 'lambda': {
      const { range, via, property } = walkToCollection(context, scope, syntax.collection)
      const variable = context.nextRange(property.target)
      const variables = new Map(scope.variables)
      if (syntax.variable) variables.set(syntax.variable, variable)
      const predicate = syntax.predicate && bindExpression(context, { ...scope, variables }, syntax.predicate)
      if (predicate) expectType(predicate, 'boolean', syntax.op, scope.option)
      return { kind: 'lambda', op: syntax.op, range, via, collection: property, variable, predicate, type: 'boolean' }
    }
    case 'count': {
      const { range, via, property } = walkToCollection(context, scope, syntax.collection)
      const member = context.nextRange(property.target)
      // Inside $count($filter=…) names are the members'; $it is still the outer instance.
      const inner: ExpressionScope = { ...scope, it: member, root: scope.root ?? scope.it, variables: new Map() }
      const filter = syntax.filter && bindCondition(context, { ...inner, option: `${scope.option} $count($filter)` }, syntax.filter)
      return { kind: 'count', range, via, collection: property, member, filter, type: 'int' }
    }
    case 'list':
      throw QueryError.invalid(`In ${scope.option}, a list in parentheses is only allowed after 'in'.`)
    case 'typeName':
      throw QueryError.invalid(`In ${scope.option}, the type name ${syntax.name} is only allowed as the last argument of cast or isof.`)
  }
}

/**
 * An alias's value; one alias naming another could loop, so a value must be an expression.
 * One the query gives no value is null: "If a parameter alias is not given a value in the
 * query part of the request URL, the value MUST be assumed to be null" (OData 4.01 Part 1,
 * Parameter Aliases), in $filter, $orderby and $compute as in a function's parameters.
 */
function aliasValue(context: BindContext, alias: AliasSyntax): ExpressionSyntax {
  const value = context.aliases.get(alias.name)
  if (!value) return { kind: 'literal', type: 'null', value: null, text: 'null', position: alias.position }
  if (value.kind === 'alias') throw QueryError.invalid(`Parameter alias ${alias.name} has another alias (${value.name}) as its value; give it a value.`, alias.name)
  return value
}

/** Why a null stands where it cannot, when it stands for an alias given no value: the client may have forgotten it. */
function unsetAliasNote(context: BindContext, syntax: ExpressionSyntax): string {
  return syntax.kind === 'alias' && !context.aliases.has(syntax.name) ? ` Parameter alias ${syntax.name} has no value in the query, so it is null.` : ''
}

/** A $filter, or any option that selects rows: it must be a condition. */
export function bindCondition(context: BindContext, scope: ExpressionScope, syntax: ExpressionSyntax): BoundExpression {
  const condition = bindExpression(context, scope, syntax)
  if (condition.type !== 'boolean' && condition.type !== 'null') {
    throw QueryError.invalid(`${scope.option} needs a condition (true or false for each row), not ${aType(condition.type)} value.`, scope.option)
  }
  return condition
}

export function bindLiteral(syntax: LiteralSyntax, option: string): BoundLiteral {
  switch (syntax.type) {
    case 'int':
      return { kind: 'literal', type: 'int', value: typeof syntax.value === 'bigint' ? syntax.value.toString() : syntax.value }
    case 'enum':
      return { kind: 'literal', type: 'string', value: syntax.value, enumType: syntax.enumType }
    case 'binary':
      throw QueryError.invalid(`Binary literals are not supported (at position ${syntax.position}).`)
    case 'duration':
      return durationLiteral(syntax.value, option)
    default:
      return { kind: 'literal', type: syntax.type, value: syntax.value }
  }
}

function bindMember(context: BindContext, scope: ExpressionScope, syntax: MemberSyntax): BoundExpression {
  const [first] = syntax.path
  if (syntax.path.length === 1 && scope.computed?.has(first)) return scope.computed.get(first)!
  if (scope.applied && !scope.variables.has(first) && first !== '$it') {
    const name = scope.applied.get(syntax.path.join('/'))
    if (name) return name
    throw QueryError.invalid(`In ${scope.option}, '${syntax.path.join('/')}' is not available after the aggregation; available: ${[...scope.applied.keys()].join(', ')}.`, syntax.path.join('/'))
  }
  const { range, path } = pathStart(context, scope, syntax)
  if (path.length === 0) throw QueryError.invalid(`In ${scope.option}, '${syntax.path.join('/')}' names an entity, not a value.`)
  const via: ReferenceProperty[] = []
  let entity: EntityModel = range.entity
  for (let i = 0; i < path.length; i++) {
    const property = resolveProperty(context, entity, path[i])
    const last = i === path.length - 1
    if (property.kind === 'scalar') {
      if (!last) throw QueryError.invalid(`In ${scope.option}, ${entity.setName}.${path[i]} is not a navigation property, so '${path.slice(0, i + 2).join('/')}' cannot follow it.`, path[i])
      if (!property.column) throw QueryError.notPersisted(entity.setName, path[i], scope.option)
      if (property.decl.encrypted) throw QueryError.encrypted(entity.setName, path[i], scope.option)
      const bound: BoundProperty = { kind: 'property', range, via, property, type: valueTypeOf(property) }
      return bound
    }
    if (property.kind === 'collection') {
      throw QueryError.invalid(`In ${scope.option}, ${entity.setName}.${path[i]} is a collection: use ${path[i]}/any(...), ${path[i]}/all(...) or ${path[i]}/$count.`, path[i])
    }
    if (last) {
      const key: BoundReferenceKey = { kind: 'referenceKey', range, via, reference: property, type: 'guid' }
      return key
    }
    via.push(property)
    entity = property.target
  }
  throw new Error('unreachable')
}

/**
 * Where a path starts: `$it/…`, `$this/…`, a lambda variable `l/…`, or (unprefixed) the entity
 * itself; and the rest of the path without its type casts (`l/entityctl.OrderLine/Quantity`).
 */
function pathStart(context: BindContext, scope: ExpressionScope, syntax: MemberSyntax): { range: Range; path: readonly string[] } {
  const [first, ...rest] = syntax.path
  const variable = first === '$it' ? (scope.root ?? scope.it) : first === '$this' ? scope.it : scope.variables.get(first)
  const [range, path] = variable ? [variable, rest] : [scope.it, syntax.path]
  return { range, path: withoutTypeCasts(context, range.entity, path, `In ${scope.option},`) }
}

function walkToCollection(context: BindContext, scope: ExpressionScope, syntax: MemberSyntax) {
  const { range, path } = pathStart(context, scope, syntax)
  const via: ReferenceProperty[] = []
  let entity = range.entity
  for (let i = 0; i < path.length; i++) {
    const property = resolveProperty(context, entity, path[i])
    if (i === path.length - 1) {
      if (property.kind !== 'collection') throw QueryError.invalid(`In ${scope.option}, ${entity.setName}.${path[i]} is not a collection.`, path[i])
      return { range, via, property }
    }
    if (property.kind !== 'reference') throw QueryError.invalid(`In ${scope.option}, ${entity.setName}.${path[i]} is not a reference, so the path cannot continue.`, path[i])
    via.push(property)
    entity = property.target
  }
  throw QueryError.invalid(`In ${scope.option}, a collection path is expected before any, all or $count.`)
}

// $metadata names an enumeration type after its entity and property, in the service's
// namespace, adding a number when that name is taken (metadata/edm-types.ts).
const ENUM_NAMESPACE = DEFAULT_NAMESPACE

function isEnumTypeOf(qualified: string, property: ScalarProperty): boolean {
  const base = `${ENUM_NAMESPACE}.${property.entity.name}${property.name}`
  return qualified === base || (qualified.startsWith(base) && /^\d+$/.test(qualified.slice(base.length)))
}

function describe(node: BoundExpression): string {
  return node.kind === 'property' ? `${node.property.entity.setName}.${node.property.name}` : `a ${node.type} value`
}

const COMPARISON = new Set(['eq', 'ne', 'gt', 'ge', 'lt', 'le'])
const ARITHMETIC = new Set(['add', 'sub', 'mul', 'div', 'divby', 'mod'])

/** `Status in ('Open','Closed')`, `Status in @states`: each item takes the type of the left side. */
function bindIn(context: BindContext, scope: ExpressionScope, left: BoundExpression, syntax: ExpressionSyntax): BoundExpression {
  const list = syntax.kind === 'alias' ? aliasValue(context, syntax) : syntax
  if (list.kind !== 'list') {
    throw QueryError.invalid(`In ${scope.option}, 'in' needs a list in parentheses on its right, as in Status in ('Open','Closed').${unsetAliasNote(context, syntax)}`)
  }
  const items = list.items.map((item) => enumMember(left, coerceLiteral(bindExpression(context, scope, item), left.type, scope.option), scope.option))
  return { kind: 'binary', op: 'in', left, right: { kind: 'list', items, type: left.type }, type: 'boolean' }
}

/**
 * An enumeration compares with its members only: a typo is an error, not an empty result.
 * A typed literal (`entityctl.EmployeeLevel'Lead'`) must name the property's enumeration type.
 * A member may be written by its value (`entityctl.EmployeeLevel'2'`, the ABNF's
 * enumMemberValue: $metadata gives each member its place as Value); it becomes its name.
 */
function enumMember(operand: BoundExpression, literal: BoundLiteral, option: string): BoundLiteral
function enumMember(operand: BoundExpression, literal: BoundExpression, option: string): BoundExpression
function enumMember(operand: BoundExpression, literal: BoundExpression, option: string): BoundExpression {
  if (literal.kind !== 'literal' || literal.type === 'null') return literal
  const isEnum = operand.kind === 'property' && operand.property.type === 'Enum'
  if (literal.enumType && !(isEnum && isEnumTypeOf(literal.enumType, operand.property))) {
    const expected = isEnum ? `; its type is ${ENUM_NAMESPACE}.${operand.property.entity.name}${operand.property.name}` : ', which is no enumeration'
    throw QueryError.invalid(`In ${option}, ${literal.enumType}'${String(literal.value)}' cannot be compared with ${describe(operand)}${expected}.`)
  }
  if (!isEnum) return literal
  const members = operand.property.decl.values ?? []
  const value = String(literal.value)
  if (members.includes(value)) return literal
  if (/^\d{1,9}$/.test(value) && Number(value) < members.length) return { ...literal, value: members[Number(value)] }
  const hint = closestName(value, members)
  throw QueryError.invalid(
    `In ${option}, '${value}' is not a value of ${operand.property.entity.setName}.${operand.property.name}${hint ? `; did you mean '${hint}'?` : ''} (values: ${members.join(', ')}).`,
    operand.property.name,
  )
}

function bindBinary(op: string, left: BoundExpression, right: BoundExpression, option: string): BoundExpression {
  if (op === 'and' || op === 'or') {
    expectType(left, 'boolean', op, option)
    expectType(right, 'boolean', op, option)
    return { kind: 'binary', op, left, right, type: 'boolean' }
  }
  if (op === 'has' && !(left.kind === 'property' && left.property.type === 'Enum')) {
    throw QueryError.invalid(`In ${option}, 'has' tests a member of an enumeration property, as in Level has 'Senior'.`)
  }
  if (COMPARISON.has(op) || op === 'has') {
    const [unifiedLeft, unifiedRight] = unify(left, right, op, option)
    const l = enumMember(unifiedRight, unifiedLeft, option)
    const r = enumMember(unifiedLeft, unifiedRight, option)
    if (l.type === 'boolean' && !['eq', 'ne'].includes(op) && op !== 'has') {
      throw QueryError.invalid(`In ${option}, '${op}' cannot compare booleans.`)
    }
    if (l.kind === 'referenceKey' && r.type !== 'null' && r.type !== 'guid') {
      throw QueryError.invalid(`In ${option}, a reference can only be compared with null or a Guid.`)
    }
    return { kind: 'binary', op: op === 'has' ? 'eq' : (op as 'eq'), left: l, right: r, type: 'boolean' }
  }
  if (ARITHMETIC.has(op)) {
    const temporal = bindTemporal(op, left, right, option)
    if (temporal) return temporal
    for (const side of [left, right]) {
      if (!NUMERIC.has(side.type)) throw QueryError.invalid(`In ${option}, '${op}' needs numbers, not ${aType(side.type)}.`)
    }
    const type: ValueType =
      op === 'divby' ? 'decimal' : left.type === 'double' || right.type === 'double' ? 'double' : left.type === 'decimal' || right.type === 'decimal' ? 'decimal' : 'int'
    return { kind: 'binary', op: op as 'add', left, right, type }
  }
  throw QueryError.invalid(`In ${option}, the operator '${op}' is not supported.`)
}

/** Gives a literal the type of the operand it is compared with ('2024-01-01' meets a Date). */
function unify(left: BoundExpression, right: BoundExpression, op: string, option: string): [BoundExpression, BoundExpression] {
  if (right.kind === 'literal' && left.kind !== 'literal') return [left, coerceLiteral(right, left.type, option)]
  if (left.kind === 'literal' && right.kind !== 'literal') return [coerceLiteral(left, right.type, option), right]
  if (left.type === right.type || left.type === 'null' || right.type === 'null') return [left, right]
  if (NUMERIC.has(left.type) && NUMERIC.has(right.type)) return [left, right]
  if ((left.type === 'date' && right.type === 'dateTimeOffset') || (left.type === 'dateTimeOffset' && right.type === 'date')) return [left, right]
  throw QueryError.invalid(`In ${option}, '${op}' cannot compare ${aType(left.type)} with ${aType(right.type)}.`)
}

export function coerceLiteral(literal: BoundExpression, type: ValueType, option: string): BoundLiteral {
  if (literal.kind !== 'literal') throw QueryError.invalid(`In ${option}, only literal values are allowed in this list.`)
  if (literal.type === 'null' || literal.type === type) return literal
  const value = literal.value
  if (literal.type === 'duration') throw QueryError.invalid(`In ${option}, duration'${String(value)}' cannot be compared with ${aType(type)}.`)
  const fail = () => QueryError.invalid(`In ${option}, ${JSON.stringify(value)} is not a valid ${EDM_TYPE_OF[type] ?? type} value.`)
  switch (type) {
    case 'decimal':
    case 'double':
      if (literal.type === 'int' || literal.type === 'decimal' || literal.type === 'double') return { kind: 'literal', type, value: String(value) }
      throw fail()
    case 'int':
      if (literal.type === 'decimal' || literal.type === 'double') return { kind: 'literal', type: literal.type, value: String(value) }
      throw fail()
    case 'date':
      if (literal.type === 'dateTimeOffset') return literal
      if (literal.type === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(String(value))) return { kind: 'literal', type, value }
      throw fail()
    case 'dateTimeOffset':
      if (literal.type === 'date') return { kind: 'literal', type: 'date', value }
      if (literal.type === 'string' && !Number.isNaN(Date.parse(String(value)))) return { kind: 'literal', type, value }
      throw fail()
    case 'guid':
      if (literal.type === 'string' && GUID_PATTERN.test(String(value))) return { kind: 'literal', type, value: String(value).toLowerCase() }
      throw fail()
    case 'timeOfDay':
      if (literal.type === 'string' && /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(String(value))) return { kind: 'literal', type, value }
      throw fail()
    case 'duration':
      if (literal.type === 'string') return durationLiteral(String(value), option)
      throw fail()
    case 'string':
      throw QueryError.invalid(`In ${option}, ${JSON.stringify(value)} (${literal.type}) cannot be compared with a string; quote it: '${String(value)}'.`)
    case 'boolean':
      throw fail()
    default:
      return literal
  }
}

function expectType(node: BoundExpression, type: ValueType, operator: string, option: string): void {
  if (node.type !== type && node.type !== 'null') {
    throw QueryError.invalid(`In ${option}, '${operator}' needs ${aType(type)} operand, not ${aType(node.type)}.`)
  }
}

/** What an argument accepts: one type, or a group of types. */
type Parameter = ValueType | 'any' | 'numeric' | 'dated' | 'timed'

/** year(), month(), day() read a calendar date; hour() … fractionalseconds() a clock time. */
const GROUPS: Readonly<Record<'numeric' | 'dated' | 'timed', ReadonlySet<ValueType>>> = {
  numeric: NUMERIC,
  dated: new Set(['date', 'dateTimeOffset']),
  timed: new Set(['dateTimeOffset', 'timeOfDay']),
}

/** The type a null argument takes where a function accepts a group: its result is null all the same. */
const NULL_OF_GROUP: Readonly<Record<keyof typeof GROUPS, ValueType>> = { numeric: 'decimal', dated: 'date', timed: 'timeOfDay' }

interface Signature {
  readonly args: readonly Parameter[]
  readonly optional?: number
  readonly returns: ValueType | ((args: readonly BoundExpression[]) => ValueType)
}

const FUNCTIONS: Record<string, Signature> = {
  contains: { args: ['string', 'string'], returns: 'boolean' },
  startswith: { args: ['string', 'string'], returns: 'boolean' },
  endswith: { args: ['string', 'string'], returns: 'boolean' },
  length: { args: ['string'], returns: 'int' },
  indexof: { args: ['string', 'string'], returns: 'int' },
  substring: { args: ['string', 'int', 'int'], optional: 1, returns: 'string' },
  tolower: { args: ['string'], returns: 'string' },
  toupper: { args: ['string'], returns: 'string' },
  trim: { args: ['string'], returns: 'string' },
  concat: { args: ['string', 'string'], returns: 'string' },
  matchespattern: { args: ['string', 'string'], returns: 'boolean' },
  year: { args: ['dated'], returns: 'int' },
  month: { args: ['dated'], returns: 'int' },
  day: { args: ['dated'], returns: 'int' },
  hour: { args: ['timed'], returns: 'int' },
  minute: { args: ['timed'], returns: 'int' },
  second: { args: ['timed'], returns: 'int' },
  fractionalseconds: { args: ['timed'], returns: 'decimal' },
  date: { args: ['dateTimeOffset'], returns: 'date' },
  time: { args: ['dateTimeOffset'], returns: 'timeOfDay' },
  totaloffsetminutes: { args: ['dateTimeOffset'], returns: 'int' },
  now: { args: [], returns: 'dateTimeOffset' },
  maxdatetime: { args: [], returns: 'dateTimeOffset' },
  mindatetime: { args: [], returns: 'dateTimeOffset' },
  round: { args: ['numeric'], returns: (args) => args[0].type },
  floor: { args: ['numeric'], returns: (args) => args[0].type },
  ceiling: { args: ['numeric'], returns: (args) => args[0].type },
}

const CAST_TYPES: Record<string, ValueType> = {
  'Edm.String': 'string', 'Edm.Int32': 'int', 'Edm.Int64': 'int', 'Edm.Int16': 'int', 'Edm.Byte': 'int',
  'Edm.Decimal': 'decimal', 'Edm.Double': 'double', 'Edm.Single': 'double', 'Edm.Boolean': 'boolean',
  'Edm.Date': 'date', 'Edm.DateTimeOffset': 'dateTimeOffset', 'Edm.TimeOfDay': 'timeOfDay', 'Edm.Guid': 'guid',
  'Edm.Duration': 'duration',
}

function bindCall(context: BindContext, scope: ExpressionScope, syntax: CallSyntax): BoundExpression {
  if (syntax.name === 'cast' || syntax.name === 'isof') return bindCast(context, scope, syntax)
  const signature = FUNCTIONS[syntax.name]
  const required = signature.args.length - (signature.optional ?? 0)
  if (syntax.args.length < required || syntax.args.length > signature.args.length) {
    const count = signature.optional ? `${required} or ${signature.args.length}` : String(signature.args.length)
    throw QueryError.invalid(`In ${scope.option}, ${syntax.name}() takes ${count} argument${count === '1' ? '' : 's'}, not ${syntax.args.length}.`)
  }
  const args = syntax.args.map((arg, i) => {
    const bound = bindExpression(context, scope, arg)
    const expected = signature.args[i]
    if (expected === 'any') return bound
    if (bound.type === 'null') return typedNull(expected in GROUPS ? NULL_OF_GROUP[expected as keyof typeof GROUPS] : (expected as ValueType))
    if (expected === 'numeric' || expected === 'dated' || expected === 'timed') {
      if (GROUPS[expected].has(bound.type)) return bound
      const types = [...GROUPS[expected]].map((type) => EDM_TYPE_OF[type]).join(' or ')
      throw QueryError.invalid(`In ${scope.option}, argument ${i + 1} of ${syntax.name}() must be an ${types}, not ${aType(bound.type)}.`)
    }
    if (bound.kind === 'literal') return coerceLiteral(bound, expected, scope.option)
    if (bound.type === expected || (expected === 'dateTimeOffset' && bound.type === 'date')) return bound
    throw QueryError.invalid(`In ${scope.option}, argument ${i + 1} of ${syntax.name}() must be ${aType(expected as ValueType)}, not ${aType(bound.type)}.`)
  })
  if (syntax.name === 'matchespattern') args[1] = patternOf(args[1], scope.option)
  const type = typeof signature.returns === 'function' ? signature.returns(args) : signature.returns
  return { kind: 'call', name: syntax.name, args, type }
}

/** A pattern written in the URL, as PostgreSQL is to run it: a typo answers 400, not a database error. */
function patternOf(pattern: BoundExpression, option: string): BoundExpression {
  if (pattern.kind !== 'literal' || typeof pattern.value !== 'string') return pattern
  return { ...pattern, value: bindPattern(pattern.value, option) }
}

function bindCast(context: BindContext, scope: ExpressionScope, syntax: CallSyntax): BoundExpression {
  const typeArg = syntax.args[syntax.args.length - 1]
  if (typeArg?.kind !== 'typeName' || syntax.args.length > 2) {
    throw QueryError.invalid(`In ${scope.option}, ${syntax.name}() takes an optional expression and a type name, e.g. ${syntax.name}(Price,Edm.String).`)
  }
  const target = CAST_TYPES[typeArg.name]
  if (!target || typeArg.collection) throw QueryError.invalid(`In ${scope.option}, ${syntax.name}() supports primitive types (${Object.keys(CAST_TYPES).join(', ')}), not ${typeArg.name}.`)
  if (syntax.args.length === 1) throw QueryError.invalid(`In ${scope.option}, ${syntax.name}() of the entity itself is not supported: entity types have no subtypes here.`)
  const operand = bindExpression(context, scope, syntax.args[0])
  if (syntax.name === 'isof') {
    return { kind: 'literal', type: 'boolean', value: operand.type === target || (NUMERIC.has(operand.type) && NUMERIC.has(target) && operand.type === 'int') }
  }
  if (!castable(operand.type, target)) {
    throw QueryError.invalid(`In ${scope.option}, a ${operand.type} value cannot be cast to ${typeArg.name}; a value casts to its own type, to Edm.String, a number to another number, an Edm.String to any type, an Edm.Date to Edm.DateTimeOffset and an Edm.DateTimeOffset to Edm.Date or Edm.TimeOfDay (an Edm.Duration to Edm.String alone).`)
  }
  if (operand.type === 'null') return typedNull(target)
  return { kind: 'call', name: 'cast', args: [operand, { kind: 'literal', type: 'string', value: target }], type: target }
}

/**
 * The casts OData URL Conventions 5.1.1.10.1 defines (to Edm.String, between numbers), a
 * string to the type it is a literal of, and Date ↔ DateTimeOffset at midnight UTC as
 * comparisons meet them. A value that does not convert (`cast('abc',Edm.Int32)`) is null.
 */
function castable(from: ValueType, to: ValueType): boolean {
  if (from === 'null' || from === to || from === 'string' || to === 'string') return true
  if (NUMERIC.has(from)) return NUMERIC.has(to)
  if (from === 'date') return to === 'dateTimeOffset'
  if (from === 'dateTimeOffset') return to === 'date' || to === 'timeOfDay'
  return false
}

/** A null that has taken the type of where it stands, so PostgreSQL never meets an untyped one. */
function typedNull(type: ValueType): BoundLiteral {
  return { kind: 'literal', type, value: null }
}

/**
 * An expression whose value the statement sorts by or returns ($orderby, $compute): a bare
 * null has no type there to take.
 */
export function bindValue(context: BindContext, scope: ExpressionScope, syntax: ExpressionSyntax): BoundExpression {
  const value = bindExpression(context, scope, syntax)
  if (value.type === 'null') throw QueryError.invalid(`In ${scope.option}, null alone has no type to sort by or compute; cast it, as in cast(null,Edm.String).${unsetAliasNote(context, syntax)}`)
  return value
}
