// The bound request: syntax resolved against the model. Names are model properties, types
// are known, literals are typed values, limits have been checked; authorize.ts checks the
// caller's permissions on this tree before it is compiled. The SQL compiler reads only these
// nodes; nothing here knows SQL.

import type { CollectionProperty, EntityModel, ReferenceProperty, ScalarProperty } from '../../model/model.ts'
import type { AggregateMethod, BinaryOperator, FunctionName, SearchSyntax } from '../parser/syntax.ts'

/** Primitive types as the compiler needs them (the SQL cast of a parameter follows from it). */
export type ValueType =
  | 'string' | 'int' | 'decimal' | 'double' | 'boolean' | 'date' | 'dateTimeOffset'
  | 'timeOfDay' | 'guid' | 'duration' | 'null'

/** The Edm type of each value type, as $metadata and messages to clients name it (null has none). */
export const EDM_TYPE_OF: Readonly<Record<ValueType, string | undefined>> = {
  string: 'Edm.String',
  int: 'Edm.Int32',
  decimal: 'Edm.Decimal',
  double: 'Edm.Double',
  boolean: 'Edm.Boolean',
  date: 'Edm.Date',
  dateTimeOffset: 'Edm.DateTimeOffset',
  timeOfDay: 'Edm.TimeOfDay',
  guid: 'Edm.Guid',
  duration: 'Edm.Duration',
  null: undefined,
}

/** A value type as messages to clients name it, with its article: `an Edm.Int32`, `null`. */
export function aType(type: ValueType): string {
  const edm = EDM_TYPE_OF[type]
  return edm ? `an ${edm}` : 'null'
}

/**
 * Where a path starts: the entity being read (`$it`), or the range variable of a lambda.
 * Each range has an id that the compiler maps to a table alias.
 */
export interface Range {
  readonly id: number
  readonly entity: EntityModel
}

export type BoundExpression =
  | BoundLiteral
  | BoundProperty
  | BoundReferenceKey
  | BoundBinary
  | BoundNot
  | BoundNegate
  | BoundCall
  | BoundLambda
  | BoundCount
  | BoundList
  | BoundAggregateRef
  | BoundSearch

export interface BoundLiteral {
  readonly kind: 'literal'
  readonly type: ValueType
  readonly value: unknown
  /** The qualified type of an enumeration literal written with one: `entityctl.EmployeeLevel`. */
  readonly enumType?: string
}

/** A stored property reached from a range through zero or more references. */
export interface BoundProperty {
  readonly kind: 'property'
  readonly range: Range
  readonly via: readonly ReferenceProperty[]
  readonly property: ScalarProperty
  readonly type: ValueType
}

/** A reference itself, compared with null (`Customer eq null`): its foreign key column. */
export interface BoundReferenceKey {
  readonly kind: 'referenceKey'
  readonly range: Range
  readonly via: readonly ReferenceProperty[]
  readonly reference: ReferenceProperty
  readonly type: 'guid'
}

export interface BoundBinary {
  readonly kind: 'binary'
  readonly op: Exclude<BinaryOperator, 'has'>
  readonly left: BoundExpression
  readonly right: BoundExpression
  readonly type: ValueType
}

export interface BoundNot {
  readonly kind: 'not'
  readonly operand: BoundExpression
  readonly type: 'boolean'
}

export interface BoundNegate {
  readonly kind: 'negate'
  readonly operand: BoundExpression
  readonly type: ValueType
}

export interface BoundCall {
  readonly kind: 'call'
  readonly name: FunctionName
  readonly args: readonly BoundExpression[]
  readonly type: ValueType
}

/** `Lines/any(l: …)` from `range` through `via` references to the collection. */
export interface BoundLambda {
  readonly kind: 'lambda'
  readonly op: 'any' | 'all'
  readonly range: Range
  readonly via: readonly ReferenceProperty[]
  readonly collection: CollectionProperty
  readonly variable: Range
  readonly predicate: BoundExpression | undefined
  readonly type: 'boolean'
}

/** `Lines/$count` (with an optional filter over the members). */
export interface BoundCount {
  readonly kind: 'count'
  readonly range: Range
  readonly via: readonly ReferenceProperty[]
  readonly collection: CollectionProperty
  readonly member: Range
  readonly filter: BoundExpression | undefined
  readonly type: 'int'
}

export interface BoundList {
  readonly kind: 'list'
  readonly items: readonly BoundLiteral[]
  readonly type: ValueType
}

/** A name introduced by $apply (aggregate alias, compute alias, grouping property). */
export interface BoundAggregateRef {
  readonly kind: 'aggregateRef'
  readonly name: string
  readonly type: ValueType
  /**
   * What the name carries over from before the aggregation: the grouping property, or what a
   * min or max took its value from. An enumeration there keeps ordering by its members.
   */
  readonly origin?: BoundExpression
}

/** `$search`: the entity of `range` matches the search in its searchable properties. */
export interface BoundSearch {
  readonly kind: 'search'
  readonly range: Range
  readonly search: SearchSyntax
  readonly type: 'boolean'
}

export interface BoundOrderby {
  readonly expression: BoundExpression
  readonly descending: boolean
}

/** A selected structural property; `publicName` is how it is written in the response. */
export interface BoundSelectItem {
  readonly property: ScalarProperty
  readonly publicName: string
}

/**
 * A navigation a virtual property's rule reads: the referenced entity, or the members, with
 * the stored properties its `from` names (and Guid), as rules see them on a write.
 */
export interface BoundNavigationNeed {
  readonly navigation: ReferenceProperty | CollectionProperty
  readonly properties: readonly ScalarProperty[]
}

/** What to read of one entity set (the top level, or an expanded navigation). */
export interface BoundEntityRead {
  readonly range: Range
  readonly select: readonly BoundSelectItem[]
  /** Virtual properties asked for: computed in Node after the query, from `needs`. */
  readonly virtuals: readonly BoundSelectItem[]
  readonly needs: readonly BoundSelectItem[]
  /** Related entities virtual properties read (`from: ['Dept.Name']`), carried for them as `needs` are. */
  readonly navigationNeeds?: readonly BoundNavigationNeed[]
  readonly expand: readonly BoundExpand[]
  readonly etag: boolean
  /** Entity references only (`$ref`, `$expand=Orders/$ref`): each entity as its `@odata.id`. */
  readonly ref?: boolean
  /** `$compute` aliases the answer carries, each computed by the statement. */
  readonly computed?: readonly BoundComputedItem[]
  /** Instance methods `$select` names (`entityctl.Close`, `entityctl.*`), advertised on each entity. */
  readonly operations?: readonly string[]
}

/** `$compute=Total mul 2 as Double`: a value of each entity under a name of the request's choosing. */
export interface BoundComputedItem {
  readonly alias: string
  readonly expression: BoundExpression
}

export interface BoundExpand {
  readonly navigation: ReferenceProperty | CollectionProperty
  readonly publicName: string
  readonly read: BoundEntityRead
  /** Collection expands only. */
  readonly filter?: BoundExpression
  readonly orderby: readonly BoundOrderby[]
  readonly top?: number
  readonly skip?: number
  readonly count: boolean
  /** `$expand=Orders/$count`: only `Orders@odata.count`, no members. */
  readonly countOnly?: boolean
}

export interface BoundAggregation {
  readonly alias: string
  readonly method: AggregateMethod | 'count'
  readonly expression: BoundExpression | undefined
  readonly type: ValueType
}

export interface BoundGroupKey {
  /** A property path, or a compute() alias's expression. */
  readonly expression: BoundExpression
  /** Output path: ['Customer', 'Country'] nests as {"Customer":{"Country":…}}. */
  readonly path: readonly string[]
}

/** $apply as a pipeline of stages over the rows of the set. */
export type BoundApplyStage =
  | { readonly kind: 'filter'; readonly predicate: BoundExpression }
  | { readonly kind: 'compute'; readonly items: readonly { alias: string; expression: BoundExpression }[] }
  | { readonly kind: 'aggregate'; readonly groupBy: readonly BoundGroupKey[]; readonly aggregations: readonly BoundAggregation[] }
  | { readonly kind: 'orderby'; readonly items: readonly BoundOrderby[] }
  | { readonly kind: 'top'; readonly count: number }
  | { readonly kind: 'skip'; readonly count: number }

export interface BoundCollectionRead {
  readonly kind: 'collection'
  readonly entity: EntityModel
  readonly read: BoundEntityRead
  readonly filter?: BoundExpression
  readonly orderby: readonly BoundOrderby[]
  readonly top?: number
  readonly skip: number
  readonly count: boolean
  readonly apply?: readonly BoundApplyStage[]
  /** Only the rows whose key is in this list (a method's collection result). */
  readonly keys?: readonly string[]
  /** Reached through a navigation of one entity: `Customers(<key>)/Orders`. */
  readonly parent?: ParentLink
}

export interface ParentLink {
  readonly navigation: ReferenceProperty | CollectionProperty
  readonly key: string
}

export interface BoundEntityByKey {
  readonly kind: 'entity'
  readonly entity: EntityModel
  /**
   * Empty when the entity is the one a single-valued `parent` reaches (`Orders(<key>)/Customer`);
   * under a collection-valued one, the member's key (`Orders(<key>)/Lines(<key>)`).
   */
  readonly key: string
  readonly parent?: ParentLink
  readonly read: BoundEntityRead
}
