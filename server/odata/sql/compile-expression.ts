// Bound expressions → SQL, with OData's null semantics:
//   Total gt 100                        →  t0."Total" > $1::numeric
//   Name ne 'x'                         →  t0."Name" is distinct from $1::text
//   not (Name eq 'x')                   →  (t0."Name" = $1::text) is not true
//   Customer/Country eq 'DE'            →  j0."Country" = $1::text   (j0 joined on the reference)
//   Lines/any(l:l/Quantity gt 8)        →  exists (select from "OrderLine" t1 where t1."Order_Guid" = t0."Guid" and …)
//   contains(Name,'steel')              →  t0."Name" like $1::text   ($1 = '%steel%', wildcards escaped)
//   Level gt 'Senior'                   →  array_position($1::text[], t0."Level") > $2::int   (members by order)
//   hour(LastLogin) eq 5                →  extract(hour from (t0."LastLogin" at time zone 'UTC'))::int = $1::int
// Paths through references become LEFT JOINs, collected per statement level by a JoinSet.

import { SEARCH_COLUMN, SEARCH_SEPARATORS, type ReferenceProperty } from '../../model/model.ts'
import type { SearchSyntax } from '../parser/syntax.ts'
import type { BoundExpression, BoundLiteral, Range, ValueType } from '../semantic/bound.ts'
import { ident, jsonValue, sqlType, type SqlBuilder } from './sql-builder.ts'
import { compileTemporal, intervalInput } from './compile-temporal.ts'

/** The LEFT JOINs that reference paths of one query level need, deduplicated by path. */
export class JoinSet {
  readonly #joins = new Map<string, { alias: string; sql: string }>()
  readonly #builder: SqlBuilder

  constructor(builder: SqlBuilder) {
    this.#builder = builder
  }

  /** The alias of the table at the end of `via` from `range`. */
  aliasOf(range: Range, via: readonly ReferenceProperty[]): string {
    let alias = this.#builder.alias(range)
    let key = String(range.id)
    for (const reference of via) {
      key += `/${reference.name}`
      let join = this.#joins.get(key)
      if (!join) {
        const next = this.#builder.joinAlias()
        join = { alias: next, sql: `left join ${ident(reference.target.table)} ${next} on ${next}."Guid" = ${alias}.${ident(reference.column)}` }
        this.#joins.set(key, join)
      }
      alias = join.alias
    }
    return alias
  }

  sql(): string {
    return [...this.#joins.values()].map((j) => j.sql).join(' ')
  }
}

export interface ExpressionTarget {
  readonly builder: SqlBuilder
  readonly joins: JoinSet
  /** How an aggregate-ref name is written (after $apply aggregation). */
  readonly aggregateRef?: (name: string) => string
}

export function compileExpression(target: ExpressionTarget, node: BoundExpression): string {
  const { builder, joins } = target
  const compile = (n: BoundExpression) => compileExpression(target, n)
  switch (node.kind) {
    case 'literal':
      if (node.type === 'duration' && node.value !== null) return builder.param(intervalInput(String(node.value)), 'duration')
      return node.type === 'null' ? 'null' : builder.param(node.value, node.type)
    case 'property':
      return `${joins.aliasOf(node.range, node.via)}.${ident(node.property.column!)}`
    case 'referenceKey':
      return `${joins.aliasOf(node.range, node.via)}.${ident(node.reference.column)}`
    case 'aggregateRef':
      return target.aggregateRef!(node.name)
    case 'search':
      return `${joins.aliasOf(node.range, [])}.${ident(SEARCH_COLUMN)} @@ ${compileSearch(builder, node.search)}`
    case 'not':
      return `(${compile(node.operand)}) is not true`
    case 'negate':
      return `(-${compile(node.operand)})`
    case 'list':
      return node.items.length === 0 ? '(null)' : `(${node.items.map(compile).join(', ')})`
    case 'binary':
      return compileBinary(target, node)
    case 'call':
      return compileCall(target, node.name, node.args)
    case 'lambda': {
      const parent = joins.aliasOf(node.range, node.via)
      const child = builder.alias(node.variable)
      const inner = new JoinSet(builder)
      const predicate = node.predicate ? compileExpression({ ...target, joins: inner }, node.predicate) : undefined
      const link = `${child}.${ident(node.collection.inverse.column)} = ${parent}."Guid"`
      const from = `from ${ident(node.collection.target.table)} ${child} ${inner.sql()}`
      if (node.op === 'any') return `exists (select 1 ${from} where ${link}${predicate ? ` and (${predicate})` : ''})`
      return `not exists (select 1 ${from} where ${link} and (${predicate ?? 'true'}) is not true)`
    }
    case 'count': {
      const parent = joins.aliasOf(node.range, node.via)
      const child = builder.alias(node.member)
      const inner = new JoinSet(builder)
      const filter = node.filter ? compileExpression({ ...target, joins: inner }, node.filter) : undefined
      return `(select count(*)::int from ${ident(node.collection.target.table)} ${child} ${inner.sql()} where ${child}.${ident(node.collection.inverse.column)} = ${parent}."Guid"${filter ? ` and (${filter})` : ''})`
    }
  }
}

const COMPARE: Record<string, string> = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' }
const ORDERING = { gt: '>', ge: '>=', lt: '<', le: '<=' }

// An enumeration published as an EnumType (members are identifiers, as metadata/edm-types.ts
// decides) orders its members by their value there, that is by declaration order.
const MEMBER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]{0,127}$/u

/** The members of the enumeration `node` holds a value of, in order; undefined when it is no such value. */
export function enumMembers(node: BoundExpression): readonly string[] | undefined {
  // After an aggregation, a grouping property or a min/max of one is still the enumeration.
  if (node.kind === 'aggregateRef') return node.origin && enumMembers(node.origin)
  if (node.kind !== 'property' || node.property.type !== 'Enum') return undefined
  const values = node.property.decl.values ?? []
  return new Set(values).size === values.length && values.every((v) => MEMBER.test(v)) ? values : undefined
}

/**
 * Level gt 'Senior' → array_position($1::text[], t0."Level") > $2::int: members compare by
 * position. Undefined when no side is such an enumeration, or the other side is free text.
 */
function compileEnumOrdering(target: ExpressionTarget, node: Extract<BoundExpression, { kind: 'binary' }>): string | undefined {
  const members = enumMembers(node.left) ?? enumMembers(node.right)
  if (!members) return undefined
  const side = (n: BoundExpression): string | undefined => {
    if (enumMembers(n)) return enumOrdinal(target, n)
    if (n.kind === 'literal' && n.type === 'string' && n.value !== null) return target.builder.param(members.indexOf(String(n.value)) + 1, 'int')
    return undefined
  }
  const left = side(node.left)
  const right = left === undefined ? undefined : side(node.right)
  return left !== undefined && right !== undefined ? `${left} ${ORDERING[node.op as keyof typeof ORDERING]} ${right}` : undefined
}

/** The position of an enumeration value among its members (1-based), for ordering; else undefined. */
export function enumOrdinal(target: ExpressionTarget, node: BoundExpression): string | undefined {
  const members = enumMembers(node)
  return members && `array_position(${target.builder.rawParam(members)}::text[], ${compileExpression(target, node)})`
}

const ARITHMETIC: Record<string, string> = { add: '+', sub: '-', mul: '*' }

function compileBinary(target: ExpressionTarget, node: Extract<BoundExpression, { kind: 'binary' }>): string {
  if (node.op in ORDERING) {
    const ordinal = compileEnumOrdering(target, node)
    if (ordinal) return ordinal
  }
  // `x eq null` before anything is compiled: a null literal must leave no parameter behind.
  const isNull = (n: BoundExpression) => n.kind === 'literal' && n.value === null
  if ((node.op === 'eq' || node.op === 'ne') && (isNull(node.left) || isNull(node.right))) {
    const operand = isNull(node.right) ? node.left : node.right
    return `${compileExpression(target, operand)} is ${node.op === 'eq' ? '' : 'not '}null`
  }
  const left = compileComparand(target, node.left, node.right)
  const compileRight = () => compileComparand(target, node.right, node.left)
  switch (node.op) {
    case 'and':
    case 'or':
      return `(${left} ${node.op} ${compileRight()})`
    case 'in':
      return compileIn(target, left, node.right)
    case 'eq':
    case 'ne': {
      const right = compileRight()
      // A literal is never null, so = keeps an index usable; `ne` must still hold for null values.
      if (node.op === 'eq') return node.right.kind === 'literal' || node.left.kind === 'literal' ? `${left} = ${right}` : `${left} is not distinct from ${right}`
      return `${left} is distinct from ${right}`
    }
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le':
      return `${left} ${COMPARE[node.op]} ${compileRight()}`
    case 'div':
      return node.type === 'int' ? `(${left} / nullif(${compileRight()}, 0))` : `(${left}::numeric / nullif(${compileRight()}, 0))`
    case 'divby':
      return `(${left}::numeric / nullif(${compileRight()}, 0))`
    case 'mod':
      // PostgreSQL has no % for float8; numeric keeps the sign of the dividend, as OData does.
      return node.type === 'double'
        ? `mod((${left})::numeric, nullif(${compileRight()}, 0)::numeric)::float8`
        : `(${left} % nullif(${compileRight()}, 0))`
    default: {
      const right = compileRight()
      if (node.op === 'add' || node.op === 'sub') {
        const temporal = compileTemporal(node.op, [node.left.type, node.right.type], left, right)
        if (temporal) return temporal
      }
      return `(${left} ${ARITHMETIC[node.op]} ${right})`
    }
  }
}

/**
 * A Date meets a DateTimeOffset at midnight UTC (the zone every DateTimeOffset is written
 * in), not at midnight of the database session's zone, as PostgreSQL's own cast would.
 *   HireDate lt LastLogin  →  (t0."HireDate"::timestamp at time zone 'UTC') < t0."LastLogin"
 */
function compileComparand(target: ExpressionTarget, node: BoundExpression, other: BoundExpression): string {
  const sql = compileExpression(target, node)
  return node.type === 'date' && other.type === 'dateTimeOffset' ? `(${sql}::timestamp at time zone 'UTC')` : sql
}

/** `x in (a, b)`; a null in the list matches a null x, as `x eq null` would. */
function compileIn(target: ExpressionTarget, left: string, list: BoundExpression): string {
  if (list.kind !== 'list' || list.items.length === 0) return 'false'
  const values = list.items.filter((item) => item.type !== 'null')
  const matches = values.length > 0 ? `${left} in (${values.map((item) => compileExpression(target, item)).join(', ')})` : 'false'
  return values.length < list.items.length ? `(${matches} or ${left} is null)` : matches
}

function likeParam(target: ExpressionTarget, literal: BoundLiteral, before: string, after: string): string {
  const escaped = String(literal.value).replace(/[\\%_]/g, (c) => `\\${c}`)
  return target.builder.param(`${before}${escaped}${after}`, 'string')
}

/**
 * startswith(Name,'A') → `t0."Name" collate "C" >= 'A' and t0."Name" collate "C" < 'B'` (as
 * parameters): the same rows in code point order, and unlike `like $1` (a pattern a generic
 * plan cannot look into, estimated to match 0.5% of the rows) a range a generic plan reads
 * from an index on the column in order, stopping at its end or at the page's last row. A
 * prefix with no next string (empty, or ending in U+10FFFF) stays a LIKE.
 */
function startsWith(target: ExpressionTarget, sql: string, prefix: BoundLiteral): string {
  const text = String(prefix.value)
  const above = successor(text)
  if (above === undefined) return `${sql} like ${likeParam(target, prefix, '', '%')}`
  const value = `${sql} collate "C"`
  return `(${value} >= ${target.builder.param(text, 'string')} and ${value} < ${target.builder.param(above, 'string')})`
}

/** The first string after every string that starts with `prefix`, in code point order. */
function successor(prefix: string): string | undefined {
  const points = [...prefix]
  const last = points.pop()?.codePointAt(0)
  if (last === undefined || last === 0x10ffff) return undefined
  const next = last === 0xd7ff ? 0xe000 : last + 1
  return points.join('') + String.fromCodePoint(next)
}

/**
 * A cast the binder allowed, as SQL that cannot raise: a value that does not convert is null
 * (OData URL Conventions 5.1.1.10.1). A DateTimeOffset casts from its UTC time, and to text
 * as the body writes it (with Z); a Date is midnight UTC.
 *   cast(Rating,Edm.Int32)  →  case when round(t0."Rating") between -2147483648 and 2147483647 then round(t0."Rating")::int end
 */
function compileCast(sql: string, from: ValueType, to: ValueType): string {
  if (from === to) return sql
  if (to === 'string') return from === 'dateTimeOffset' || from === 'duration' ? jsonValue(sql, from) : `(${sql})::text`
  if (from === 'string') return castText(sql, to)
  if (from === 'dateTimeOffset') return `(${sql} at time zone 'UTC')::${sqlType(to)}`
  if (from === 'date') return `(${sql}::timestamp at time zone 'UTC')`
  if (to === 'int') return `case when round(${sql}) between -2147483648 and 2147483647 then round(${sql})::int end`
  if (to === 'double') return `case when ${sql} = 0 or abs(${sql}) between 1e-307 and 1e308 then (${sql})::float8 end`
  return `(${sql})::${sqlType(to)}`
}

// The literal forms a string casts from: digits and exponents bounded so that numeric and
// float8 take every match, dates and times with fields in range (PostgreSQL raises otherwise).
const INTEGER_TEXT = '^[+-]?0*[0-9]{1,18}$'
const NUMBER_TEXT = '^[+-]?[0-9]{1,200}(\\.[0-9]{1,200})?([eE][+-]?[0-9]{1,2})?$'
const DATE_TEXT = '(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])'
const TIME_TEXT = '([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,12})?)?'
const GUID_TEXT = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
// A duration literal's text (bind-temporal.ts): a number at least, and after T one at least.
const DURATION_TEXT = '^-?P(?=[0-9T])([0-9]{1,9}D)?(T(?=[0-9])([0-9]{1,9}H)?([0-9]{1,9}M)?([0-9]{1,9}(\\.[0-9]+)?S)?)?$'

/** `cast('42',Edm.Int32)`: the string's value when it is a literal of the type, else null. */
function castText(sql: string, to: ValueType): string {
  const matching = (pattern: string, value: string) => `case when ${sql} ~ '${pattern}' then ${value} end`
  // 2024-02-30 matches DATE_TEXT; the day must also exist in its month.
  const dayExists = `substr(${sql}, 9, 2)::int <= extract(day from make_date(substr(${sql}, 1, 4)::int, substr(${sql}, 6, 2)::int, 1) + interval '1 month - 1 day')`
  switch (to) {
    case 'int': return matching(INTEGER_TEXT, `case when (${sql})::int8 between -2147483648 and 2147483647 then (${sql})::int8::int end`)
    case 'decimal': return matching(NUMBER_TEXT, `(${sql})::numeric`)
    case 'double': return matching(NUMBER_TEXT, `(${sql})::float8`)
    case 'boolean': return `case lower(${sql}) when 'true' then true when 'false' then false end`
    case 'guid': return matching(GUID_TEXT, `(${sql})::uuid`)
    // PostgreSQL reads `P1D`, not `-P1D`: the sign is taken off, and given back to the interval.
    case 'duration': return `case when upper(${sql}) ~ '${DURATION_TEXT}' then case when left(${sql}, 1) = '-' then -(upper(substr(${sql}, 2))::interval) else upper(${sql})::interval end end`
    case 'timeOfDay': return matching(`^${TIME_TEXT}$`, `(${sql})::time`)
    case 'date': return matching(`^${DATE_TEXT}$`, `case when ${dayExists} then (${sql})::date end`)
    case 'dateTimeOffset':
      return matching(`^${DATE_TEXT}T${TIME_TEXT}(Z|[+-]([01][0-9]|1[0-4]):[0-5][0-9])$`, `case when ${dayExists} then (${sql})::timestamptz end`)
    default: throw new Error(`no cast from a string to ${to}`)
  }
}

/** The offset a DateTimeOffset literal ends with (the lexer's forms): `Z`, `+05:00`, `-03:30`. */
const OFFSET = /(Z|([+-])(\d{2}):(\d{2}))$/i

function offsetMinutes(literal: string): number {
  const [, , sign, hours, minutes] = OFFSET.exec(literal) ?? []
  if (!sign) return 0
  return (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes))
}

function compileCall(target: ExpressionTarget, name: string, args: readonly BoundExpression[]): string {
  const sql = (i: number) => compileExpression(target, args[i])
  const literal = (i: number) => (args[i]?.kind === 'literal' && args[i].type === 'string' && (args[i] as BoundLiteral).value !== null ? (args[i] as BoundLiteral) : undefined)
  // Parts of a stored DateTimeOffset are those of its UTC time, whatever the session's time
  // zone; a literal's are those of its own offset (URL Conventions 5.1.1.7), the wall clock it
  // writes: hour(2024-01-01T23:00:00-05:00) is 23.
  const offsetLiteral = (i: number) => (args[i].kind === 'literal' && args[i].type === 'dateTimeOffset' && typeof (args[i] as BoundLiteral).value === 'string' ? String((args[i] as BoundLiteral).value) : undefined)
  const utc = (i: number) => {
    const literal = offsetLiteral(i)
    if (literal !== undefined) return `(${target.builder.param(literal.replace(OFFSET, ''), 'string')})::timestamp`
    return args[i].type === 'dateTimeOffset' ? `(${sql(i)} at time zone 'UTC')` : sql(i)
  }
  switch (name) {
    case 'contains': {
      const pattern = literal(1)
      return pattern ? `${sql(0)} like ${likeParam(target, pattern, '%', '%')}` : `strpos(${sql(0)}, ${sql(1)}) > 0`
    }
    case 'startswith': {
      const pattern = literal(1)
      return pattern ? startsWith(target, sql(0), pattern) : `starts_with(${sql(0)}, ${sql(1)})`
    }
    case 'endswith': {
      const pattern = literal(1)
      return pattern ? `${sql(0)} like ${likeParam(target, pattern, '%', '')}` : `right(${sql(0)}, char_length(${sql(1)})) = ${sql(1)}`
    }
    case 'length': return `char_length(${sql(0)})`
    case 'indexof': return `(strpos(${sql(0)}, ${sql(1)}) - 1)`
    // A negative start counts from the end (URL Conventions 4.01 §5.1.1.7.4), back to the first
    // character at most. substr() refuses a negative length; OData's substring then is empty.
    case 'substring': {
      const text = sql(0)
      const start = sql(1)
      const from = `(case when ${start} < 0 then greatest(char_length(${text}) + ${start}, 0) else ${start} end + 1)`
      return args.length === 3 ? `substr(${text}, ${from}, greatest(${sql(2)}, 0))` : `substr(${text}, ${from})`
    }
    // Text columns collate "C" (code point order), whose lower() and upper() know ASCII only;
    // ICU's root locale cases every letter, and "C" keeps the result's order by code point.
    case 'tolower': return `(lower(${sql(0)} collate "und-x-icu") collate "C")`
    case 'toupper': return `(upper(${sql(0)} collate "und-x-icu") collate "C")`
    case 'trim': return `btrim(${sql(0)})`
    case 'concat': return `(${sql(0)} || ${sql(1)})`
    case 'matchespattern': return `${sql(0)} ~ ${sql(1)}`
    case 'year': return `extract(year from ${utc(0)})::int`
    case 'month': return `extract(month from ${utc(0)})::int`
    case 'day': return `extract(day from ${utc(0)})::int`
    case 'hour': return `extract(hour from ${utc(0)})::int`
    case 'minute': return `extract(minute from ${utc(0)})::int`
    case 'second': return `floor(extract(second from ${utc(0)}))::int`
    case 'fractionalseconds': return `(extract(second from ${utc(0)}) - floor(extract(second from ${utc(0)})))`
    case 'date': return `${utc(0)}::date`
    // A Date is midnight (time() accepts one as comparisons meet it, at midnight UTC).
    case 'time': return args[0].type === 'date' ? `${sql(0)}::timestamp::time` : `${utc(0)}::time`
    // Values are stored and written in UTC, so the offset is 0, or null for a null value; a literal has its own.
    case 'totaloffsetminutes': {
      const literal = offsetLiteral(0)
      return literal === undefined ? `(case when ${sql(0)} is null then null else 0 end)` : target.builder.param(offsetMinutes(literal), 'int')
    }
    case 'now': return 'now()'
    case 'maxdatetime': return `'9999-12-31T23:59:59.999Z'::timestamptz`
    case 'mindatetime': return `'0001-01-01T00:00:00Z'::timestamptz`
    // OData rounds half away from zero, as numeric round() does; float8 round() rounds to even.
    case 'round': return args[0].type === 'double' ? `round((${sql(0)})::numeric)::float8` : `round(${sql(0)})`
    case 'floor': return `floor(${sql(0)})`
    case 'ceiling': return `ceil(${sql(0)})`
    case 'cast': return compileCast(sql(0), args[0].type, (args[1] as BoundLiteral).value as ValueType)
    default: throw new Error(`no SQL for function ${name}`)
  }
}

/**
 * A search as a tsquery over the entity's generated `_Search` column (persistence/
 * entity-schemas.ts), with the same 'simple' configuration, each word and phrase a parameter:
 *   blue OR "light green" NOT red  →  (plainto_tsquery('simple', $1) || (phraseto_tsquery('simple', $2) && (!!plainto_tsquery('simple', $3))))
 * (each $n split into words as the column splits them)
 */
function compileSearch(builder: SqlBuilder, search: SearchSyntax): string {
  switch (search.kind) {
    case 'searchTerm': {
      // Split as the column splits its text: light-green is light and green.
      const words = `regexp_replace(${builder.param(search.text, 'string')}, '${SEARCH_SEPARATORS}', ' ', 'g')`
      return `${search.phrase ? 'phraseto_tsquery' : 'plainto_tsquery'}('simple', ${words})`
    }
    case 'searchNot':
      return `(!!${compileSearch(builder, search.operand)})`
    case 'searchBinary':
      return `(${compileSearch(builder, search.left)} ${search.op === 'and' ? '&&' : '||'} ${compileSearch(builder, search.right)})`
  }
}
