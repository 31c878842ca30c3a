// Binds $apply (OData Data Aggregation): a pipeline of transformations. Before an
// aggregation, expressions see the entity; after it, only the names it produced
// (grouping paths such as Customer/Country, and aggregate aliases).
//   filter(Status eq 'Closed')/groupby((Customer/Country),aggregate(Total with sum as Revenue))

import { QueryError } from '../../errors.ts'
import type { ApplyTransformationSyntax } from '../parser/syntax.ts'
import { aType, type BoundAggregateRef, type BoundAggregation, type BoundExpression, type BoundApplyStage, type BoundGroupKey, type Range, type ValueType } from './bound.ts'
import type { BindContext } from './bind-context.ts'
import { bindExpression, bindValue, type ExpressionScope } from './bind-expression.ts'
import { bindOrderby, bindSearch } from './bind-read.ts'

export interface BoundApply {
  readonly stages: readonly BoundApplyStage[]
  /** Names available after the pipeline (for $orderby and later stages); undefined: entity properties. */
  readonly names: ReadonlyMap<string, BoundAggregateRef> | undefined
  /** The compute() aliases: while no aggregation replaced the entities, $filter and $orderby name them too. */
  readonly computed: ReadonlyMap<string, BoundExpression>
}

export function bindApply(context: BindContext, range: Range, transformations: readonly ApplyTransformationSyntax[]): BoundApply {
  const stages: BoundApplyStage[] = []
  let names: Map<string, BoundAggregateRef> | undefined
  const computed = new Map<string, BoundExpression>()
  const scope = (): ExpressionScope => ({ it: range, variables: new Map(), option: '$apply', applied: names, computed })
  for (const transformation of transformations) {
    switch (transformation.kind) {
      case 'filter': {
        const predicate = bindExpression(context, scope(), transformation.predicate)
        if (predicate.type !== 'boolean') throw QueryError.invalid('$apply filter() needs a condition.')
        stages.push({ kind: 'filter', predicate })
        break
      }
      case 'search':
        if (names) throw QueryError.invalid('$apply: search() after an aggregation is not supported; search before it.')
        stages.push({ kind: 'filter', predicate: bindSearch(range, transformation.search) })
        break
      case 'compute': {
        if (names) throw QueryError.invalid('$apply: compute() after an aggregation is not supported; compute before it.')
        const items = transformation.items.map((item) => ({ alias: item.alias, expression: bindValue(context, scope(), item.expression) }))
        for (const item of items) computed.set(item.alias, item.expression)
        stages.push({ kind: 'compute', items })
        break
      }
      case 'groupby':
      case 'aggregate': {
        if (names) throw QueryError.invalid('$apply: only one groupby or aggregate is supported in a pipeline.')
        const properties = transformation.kind === 'groupby' ? transformation.properties : []
        const groupBy: BoundGroupKey[] = properties.map((member) => {
          const bound = bindExpression(context, scope(), member)
          // A compute() alias is a property of the rows it added it to (Data Aggregation 3.2.3).
          const isAlias = member.path.length === 1 && computed.has(member.path[0])
          if (!isAlias && bound.kind !== 'property' && bound.kind !== 'referenceKey') throw QueryError.invalid(`$apply groupby: '${member.path.join('/')}' must be a property path.`)
          return { expression: bound, path: member.path }
        })
        const inner = transformation.kind === 'groupby' ? transformation.transformations : [transformation]
        const aggregations: BoundAggregation[] = []
        for (const step of inner) {
          if (step.kind !== 'aggregate') throw QueryError.invalid(`$apply groupby: only aggregate() is supported inside groupby, not ${step.kind}().`)
          for (const aggregation of step.aggregations) {
            const expression = aggregation.expression && bindValue(context, scope(), aggregation.expression)
            const type: ValueType =
              aggregation.method === 'count' || aggregation.method === 'countdistinct' ? 'int'
              : aggregation.method === 'average' ? 'decimal'
              : (expression?.type ?? 'decimal')
            if (expression && ['sum', 'average'].includes(aggregation.method) && !['int', 'decimal', 'double'].includes(expression.type)) {
              throw QueryError.invalid(`$apply: ${aggregation.method} needs a number, not ${aType(expression.type)}.`)
            }
            aggregations.push({ alias: aggregation.alias, method: aggregation.method, expression, type })
          }
        }
        names = new Map<string, BoundAggregateRef>()
        for (const key of groupBy) {
          const name = key.path.join('/')
          names.set(name, { kind: 'aggregateRef', name, type: key.expression.type, origin: key.expression })
        }
        for (const aggregation of aggregations) {
          if (names.has(aggregation.alias)) throw QueryError.invalid(`$apply: the alias '${aggregation.alias}' is used twice.`)
          // A min or max is one of the values it took: it orders as they do (an enumeration by its members).
          const origin = aggregation.method === 'min' || aggregation.method === 'max' ? aggregation.expression : undefined
          names.set(aggregation.alias, { kind: 'aggregateRef', name: aggregation.alias, type: aggregation.type, origin })
        }
        stages.push({ kind: 'aggregate', groupBy, aggregations })
        break
      }
      case 'orderby':
        stages.push({ kind: 'orderby', items: bindOrderby(context, scope(), transformation.items) })
        break
      case 'top':
        if (transformation.count > context.limits.maxTop) throw QueryError.limitExceeded('MaxTop', transformation.count, context.limits.maxTop)
        stages.push({ kind: 'top', count: transformation.count })
        break
      case 'skip':
        stages.push({ kind: 'skip', count: transformation.count })
        break
    }
  }
  return { stages, names, computed }
}
