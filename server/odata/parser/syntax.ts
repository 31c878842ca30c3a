// The syntax tree of an OData request: what the text says, before anything knows the entity
// model (odata.net's "parse, then bind"). The binder (odata/semantic/) resolves names and types;
// later stages never read these nodes. Unions are tagged by `kind`; every node keeps a 0-based
// `position` in the text it came from (the decoded option value, or the decoded resource path),
// so binder errors can point at it: where the node starts, except that a binary node points at
// its operator (`Name eq 5` → 5), the place a type error is about.

// ── Expressions ($filter, $orderby, $apply, $compute, alias values) ─────────────────────────

export type ExpressionSyntax =
  | LiteralSyntax
  | MemberSyntax
  | AliasSyntax
  | BinarySyntax
  | UnarySyntax
  | CallSyntax
  | TypeNameSyntax
  | LambdaSyntax
  | CountSyntax
  | ListSyntax

interface LiteralOf<Type extends string, Value> {
  readonly kind: 'literal'
  readonly type: Type
  readonly value: Value
  /** The literal as written (after percent-decoding), e.g. `'O''Neil'` or `2024-01-31`. */
  readonly text: string
  readonly position: number
}

/**
 * A primitive literal. `value` is the JavaScript reading of `text`:
 * int → number (bigint beyond 2^53; beyond int64 the literal is a decimal), decimal → its
 * digits as a string (exact), double → number (INF, -INF, NaN included), guid → lower-case
 * string, date / dateTimeOffset / timeOfDay / duration / binary → the checked text without
 * prefix or quotes. A quoted `'P1D'` or `'Red'` is a string: OData 4.01 lets duration and enum
 * literals drop their prefix, and only the binder knows the other operand's type.
 */
export type LiteralSyntax =
  | LiteralOf<'string', string>
  | LiteralOf<'int', number | bigint>
  | LiteralOf<'decimal', string>
  | LiteralOf<'double', number>
  | LiteralOf<'boolean', boolean>
  | LiteralOf<'null', null>
  | LiteralOf<'guid', string>
  | LiteralOf<'date', string>
  | LiteralOf<'dateTimeOffset', string>
  | LiteralOf<'timeOfDay', string>
  | LiteralOf<'duration', string>
  | LiteralOf<'binary', string>
  | EnumLiteralSyntax

/** `Sales.Color'Red,Blue'`: value is the member list as written, enumType the qualified type. */
export interface EnumLiteralSyntax extends LiteralOf<'enum', string> {
  readonly enumType: string
}

export type LiteralType = LiteralSyntax['type']

/**
 * A path of names: `Name`, `Customer/Name`, `$it/Total`, `l/Quantity` (a lambda variable),
 * `NS.VipCustomer/Rank` (type cast). Which segment is a property, navigation, type or range
 * variable is the binder's business.
 */
export interface MemberSyntax {
  readonly kind: 'member'
  readonly path: readonly string[]
  readonly position: number
}

/** A parameter alias reference, `@p`; its value is in QueryOptionsSyntax.aliases. */
export interface AliasSyntax {
  readonly kind: 'alias'
  /** With the `@`: `@p`. */
  readonly name: string
  readonly position: number
}

export type BinaryOperator =
  | 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'
  | 'and' | 'or'
  | 'add' | 'sub' | 'mul' | 'div' | 'divby' | 'mod'
  | 'has' | 'in'

export interface BinarySyntax {
  readonly kind: 'binary'
  readonly op: BinaryOperator
  readonly left: ExpressionSyntax
  /** For `in`: a ListSyntax, or any operand (a collection path, an alias). */
  readonly right: ExpressionSyntax
  readonly position: number
}

export interface UnarySyntax {
  readonly kind: 'unary'
  readonly op: 'not' | 'negate'
  readonly operand: ExpressionSyntax
  readonly position: number
}

/** A built-in function call; `name` is lower-cased (`matchesPattern` → `matchespattern`). */
export interface CallSyntax {
  readonly kind: 'call'
  readonly name: FunctionName
  readonly args: readonly ExpressionSyntax[]
  readonly position: number
}

export type FunctionName =
  | 'contains' | 'startswith' | 'endswith' | 'length' | 'indexof' | 'substring'
  | 'tolower' | 'toupper' | 'trim' | 'concat' | 'matchespattern'
  | 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'fractionalseconds'
  | 'date' | 'time' | 'now' | 'totaloffsetminutes' | 'maxdatetime' | 'mindatetime'
  | 'round' | 'floor' | 'ceiling'
  | 'cast' | 'isof'

/** The type argument of cast and isof: `Edm.Decimal`, `Sales.BigOrder`, `Collection(Edm.String)`. */
export interface TypeNameSyntax {
  readonly kind: 'typeName'
  readonly name: string
  readonly collection: boolean
  readonly position: number
}

/** `Lines/any(l:l/Quantity gt 8)`; `Lines/any()` has neither variable nor predicate. */
export interface LambdaSyntax {
  readonly kind: 'lambda'
  readonly op: 'any' | 'all'
  readonly collection: MemberSyntax
  readonly variable: string | undefined
  readonly predicate: ExpressionSyntax | undefined
  readonly position: number
}

/** `Lines/$count`, or `Lines/$count($filter=Quantity gt 1)`. */
export interface CountSyntax {
  readonly kind: 'count'
  readonly collection: MemberSyntax
  readonly filter: ExpressionSyntax | undefined
  readonly position: number
}

/** The right side of `in`: `('a','b')`. Items are literals or aliases; may be empty. */
export interface ListSyntax {
  readonly kind: 'list'
  readonly items: readonly (LiteralSyntax | AliasSyntax)[]
  readonly position: number
}

// ── $orderby, $select, $expand, $compute ──────────────────────────────────────────────────

export interface OrderbyItemSyntax {
  readonly kind: 'orderby'
  readonly expression: ExpressionSyntax
  readonly direction: 'asc' | 'desc'
  readonly position: number
}

export type SelectItemSyntax = SelectPathSyntax | SelectAllSyntax | SelectOperationsSyntax

/** `Name`, `Customer/Name`. */
export interface SelectPathSyntax {
  readonly kind: 'selectPath'
  readonly path: readonly string[]
  readonly position: number
}

/** `*`: every structural property. */
export interface SelectAllSyntax {
  readonly kind: 'selectAll'
  readonly position: number
}

/** `Namespace.*`: every operation of a schema. */
export interface SelectOperationsSyntax {
  readonly kind: 'selectOperations'
  readonly namespace: string
  readonly position: number
}

export type ExpandItemSyntax = ExpandPathSyntax | ExpandAllSyntax

/** `Orders`, `Customer/Orders($filter=…;$top=5)`, `Orders/$ref`, `Orders/$count`. */
export interface ExpandPathSyntax {
  readonly kind: 'expandPath'
  readonly path: readonly string[]
  /** `ref` for `/$ref` (references only), `count` for `/$count`, else undefined. */
  readonly suffix: 'ref' | 'count' | undefined
  readonly options: ExpandOptionsSyntax
  readonly position: number
}

/** `*`, `*` followed by `/$ref`, `*($levels=2)`. */
export interface ExpandAllSyntax {
  readonly kind: 'expandAll'
  readonly ref: boolean
  readonly levels: number | 'max' | undefined
  readonly position: number
}

/** Options nested in an expand item's parentheses; absent ones are undefined. */
export interface ExpandOptionsSyntax {
  readonly filter?: ExpressionSyntax
  readonly orderby?: readonly OrderbyItemSyntax[]
  readonly select?: readonly SelectItemSyntax[]
  readonly expand?: readonly ExpandItemSyntax[]
  readonly compute?: readonly ComputeItemSyntax[]
  readonly search?: SearchSyntax
  readonly top?: number
  readonly skip?: number
  readonly count?: boolean
  readonly levels?: number | 'max'
}

/** `Price mul Quantity as Amount`, in $compute and in $apply's compute(). */
export interface ComputeItemSyntax {
  readonly kind: 'compute'
  readonly expression: ExpressionSyntax
  readonly alias: string
  readonly position: number
}

// ── $search (OData 4.01 URL Conventions 5.1.7) ────────────────────────────────────────────

/** `blue OR "light green" NOT red`: words, phrases, AND (also implicit), OR, NOT, parentheses. */
export type SearchSyntax = SearchTermSyntax | SearchNotSyntax | SearchBinarySyntax

export interface SearchTermSyntax {
  readonly kind: 'searchTerm'
  /** The word, or the phrase without its quotes and escapes. */
  readonly text: string
  readonly phrase: boolean
  readonly position: number
}

export interface SearchNotSyntax {
  readonly kind: 'searchNot'
  readonly operand: SearchSyntax
}

export interface SearchBinarySyntax {
  readonly kind: 'searchBinary'
  readonly op: 'and' | 'or'
  readonly left: SearchSyntax
  readonly right: SearchSyntax
}

// ── $apply (OData Data Aggregation 4.0) ───────────────────────────────────────────────────

export type ApplyTransformationSyntax =
  | ApplyFilterSyntax
  | ApplyGroupbySyntax
  | ApplyAggregateSyntax
  | ApplyComputeSyntax
  | ApplyOrderbySyntax
  | ApplyTopSyntax
  | ApplySkipSyntax
  | ApplySearchSyntax

/** `search(blue OR green)`: the entities $search would find. */
export interface ApplySearchSyntax {
  readonly kind: 'search'
  readonly search: SearchSyntax
  readonly position: number
}

export interface ApplyFilterSyntax {
  readonly kind: 'filter'
  readonly predicate: ExpressionSyntax
  readonly position: number
}

/** `groupby((Customer/Name,Status),aggregate(…))`: the transformations run per group. */
export interface ApplyGroupbySyntax {
  readonly kind: 'groupby'
  readonly properties: readonly MemberSyntax[]
  readonly transformations: readonly ApplyTransformationSyntax[]
  readonly position: number
}

export interface ApplyAggregateSyntax {
  readonly kind: 'aggregate'
  readonly aggregations: readonly AggregationSyntax[]
  readonly position: number
}

export type AggregateMethod = 'sum' | 'min' | 'max' | 'average' | 'countdistinct'

/** `Total with sum as Revenue`, or `$count as Orders` (method and expression undefined). */
export interface AggregationSyntax {
  readonly kind: 'aggregation'
  readonly expression: ExpressionSyntax | undefined
  readonly method: AggregateMethod | 'count'
  readonly alias: string
  readonly position: number
}

export interface ApplyComputeSyntax {
  readonly kind: 'compute'
  readonly items: readonly ComputeItemSyntax[]
  readonly position: number
}

export interface ApplyOrderbySyntax {
  readonly kind: 'orderby'
  readonly items: readonly OrderbyItemSyntax[]
  readonly position: number
}

export interface ApplyTopSyntax {
  readonly kind: 'top'
  readonly count: number
  readonly position: number
}

export interface ApplySkipSyntax {
  readonly kind: 'skip'
  readonly count: number
  readonly position: number
}

// ── The whole query string ────────────────────────────────────────────────────────────────

/**
 * The query options of one request. System options are keyed without `$`; absent ones are
 * undefined. Aliases (`@p=…`) are parsed expressions, referenced from the trees as AliasSyntax
 * and resolved by the binder. Custom options (`before=2024-01-01`, how GET method parameters
 * arrive) keep their decoded text: only the binder knows which are method parameters, and
 * parses those with parseParameterValue.
 */
export interface QueryOptionsSyntax {
  readonly filter?: ExpressionSyntax
  readonly orderby?: readonly OrderbyItemSyntax[]
  readonly select?: readonly SelectItemSyntax[]
  readonly expand?: readonly ExpandItemSyntax[]
  readonly apply?: readonly ApplyTransformationSyntax[]
  readonly compute?: readonly ComputeItemSyntax[]
  readonly search?: SearchSyntax
  readonly top?: number
  readonly skip?: number
  readonly count?: boolean
  readonly skiptoken?: string
  readonly format?: string
  readonly aliases: ReadonlyMap<string, ExpressionSyntax>
  readonly custom: ReadonlyMap<string, string>
}

// ── The resource path ─────────────────────────────────────────────────────────────────────

/** The path after `/api/`; no segments is the service document. */
export interface ResourcePathSyntax {
  readonly segments: readonly PathSegmentSyntax[]
}

export type PathSegmentSyntax =
  | NameSegmentSyntax
  | KeySegmentSyntax
  | CountSegmentSyntax
  | RefSegmentSyntax
  | ValueSegmentSyntax
  | MetadataSegmentSyntax

/**
 * A name, with what followed it in parentheses: `Orders` (args undefined), `Orders(<guid>)`,
 * `Orders(Guid=<guid>)`, `Close()` (args empty), `OpenSince(before=2024-01-01)`, `NS.Method`.
 * Whether the parentheses hold a key or function parameters is the binder's call.
 */
export interface NameSegmentSyntax {
  readonly kind: 'name'
  readonly name: string
  readonly args: readonly PathArgumentSyntax[] | undefined
  readonly position: number
}

/** `Guid=<guid>` or a lone `<guid>` (name undefined) inside a segment's parentheses. */
export interface PathArgumentSyntax {
  readonly name: string | undefined
  readonly value: LiteralSyntax | AliasSyntax
  readonly position: number
}

/** Key as segment (OData 4.01): `Orders/<guid>`. */
export interface KeySegmentSyntax {
  readonly kind: 'key'
  readonly value: LiteralSyntax
  readonly position: number
}

export interface CountSegmentSyntax {
  readonly kind: 'count'
  readonly position: number
}

export interface RefSegmentSyntax {
  readonly kind: 'ref'
  readonly position: number
}

export interface ValueSegmentSyntax {
  readonly kind: 'value'
  readonly position: number
}

export interface MetadataSegmentSyntax {
  readonly kind: 'metadata'
  readonly position: number
}
