// Bound expressions → SQL, with OData's null semantics:
//   Total gt 100                        →  t0."Total" > $1::numeric
//   Name ne 'x'                         →  t0."Name" is distinct from $1::text
//   not (Name eq 'x')                   →  (t0."Name" = $1::text) is not true
//   Customer/Country eq 'DE'            →  j0."Country" = $1::text   (j0 joined on the reference)
//   Lines/any(l:l/Quantity gt 8)        →  exists (select from "OrderLine" t1 where t1."Order_Guid" = t0."Guid" and …)
//   contains(Name,'steel')              →  t0."Name" like $1::text   ($1 = '%steel%', wildcards escaped)
// Paths through references become LEFT JOINs, collected per statement level by a JoinSet.

import type { ReferenceProperty } from '../../model/model.ts'
import type { BoundExpression, BoundLiteral, Range } from '../semantic/bound.ts'
import { ident, sqlType, type SqlBuilder } from './sql-builder.ts'

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
      return node.type === 'null' ? 'null' : builder.param(node.value, node.type)
    case 'property':
      return `${joins.aliasOf(node.range, node.via)}.${ident(node.property.column!)}`
    case 'referenceKey':
      return `${joins.aliasOf(node.range, node.via)}.${ident(node.reference.column)}`
    case 'aggregateRef':
      return target.aggregateRef!(node.name)
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
const ARITHMETIC: Record<string, string> = { add: '+', sub: '-', mul: '*', mod: '%' }

function compileBinary(target: ExpressionTarget, node: Extract<BoundExpression, { kind: 'binary' }>): string {
  const left = compileExpression(target, node.left)
  const compileRight = () => compileExpression(target, node.right)
  switch (node.op) {
    case 'and':
    case 'or':
      return `(${left} ${node.op} ${compileRight()})`
    case 'in':
      return `${left} in ${compileRight()}`
    case 'eq':
    case 'ne': {
      const isNull = (n: BoundExpression) => n.kind === 'literal' && n.type === 'null'
      if (isNull(node.right)) return `${left} is ${node.op === 'eq' ? '' : 'not '}null`
      if (isNull(node.left)) return `${compileRight()} is ${node.op === 'eq' ? '' : 'not '}null`
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
    default:
      return `(${left} ${ARITHMETIC[node.op]} ${compileRight()})`
  }
}

function likeParam(target: ExpressionTarget, literal: BoundLiteral, before: string, after: string): string {
  const escaped = String(literal.value).replace(/[\\%_]/g, (c) => `\\${c}`)
  return target.builder.param(`${before}${escaped}${after}`, 'string')
}

function compileCall(target: ExpressionTarget, name: string, args: readonly BoundExpression[]): string {
  const sql = (i: number) => compileExpression(target, args[i])
  const literal = (i: number) => (args[i]?.kind === 'literal' && args[i].type === 'string' ? (args[i] as BoundLiteral) : undefined)
  switch (name) {
    case 'contains': {
      const pattern = literal(1)
      return pattern ? `${sql(0)} like ${likeParam(target, pattern, '%', '%')}` : `strpos(${sql(0)}, ${sql(1)}) > 0`
    }
    case 'startswith': {
      const pattern = literal(1)
      return pattern ? `${sql(0)} like ${likeParam(target, pattern, '', '%')}` : `starts_with(${sql(0)}, ${sql(1)})`
    }
    case 'endswith': {
      const pattern = literal(1)
      return pattern ? `${sql(0)} like ${likeParam(target, pattern, '%', '')}` : `right(${sql(0)}, char_length(${sql(1)})) = ${sql(1)}`
    }
    case 'length': return `char_length(${sql(0)})`
    case 'indexof': return `(strpos(${sql(0)}, ${sql(1)}) - 1)`
    case 'substring': return args.length === 3 ? `substr(${sql(0)}, ${sql(1)} + 1, ${sql(2)})` : `substr(${sql(0)}, ${sql(1)} + 1)`
    case 'tolower': return `lower(${sql(0)})`
    case 'toupper': return `upper(${sql(0)})`
    case 'trim': return `btrim(${sql(0)})`
    case 'concat': return `(${sql(0)} || ${sql(1)})`
    case 'matchespattern': return `${sql(0)} ~ ${sql(1)}`
    case 'year': return `extract(year from ${sql(0)})::int`
    case 'month': return `extract(month from ${sql(0)})::int`
    case 'day': return `extract(day from ${sql(0)})::int`
    case 'hour': return `extract(hour from ${sql(0)})::int`
    case 'minute': return `extract(minute from ${sql(0)})::int`
    case 'second': return `floor(extract(second from ${sql(0)}))::int`
    case 'fractionalseconds': return `(extract(second from ${sql(0)}) - floor(extract(second from ${sql(0)})))`
    case 'date': return `(${sql(0)} at time zone 'UTC')::date`
    case 'time': return `(${sql(0)} at time zone 'UTC')::time`
    case 'totaloffsetminutes': return `0`
    case 'now': return 'now()'
    case 'maxdatetime': return `'9999-12-31T23:59:59.999Z'::timestamptz`
    case 'mindatetime': return `'0001-01-01T00:00:00Z'::timestamptz`
    case 'round': return `round(${sql(0)})`
    case 'floor': return `floor(${sql(0)})`
    case 'ceiling': return `ceil(${sql(0)})`
    case 'cast': return `(${sql(0)})::${sqlType((args[1] as BoundLiteral).value as never)}`
    default: throw new Error(`no SQL for function ${name}`)
  }
}
