// Bound reads in one line, so a binder test reads as a table of "this URL binds to that".
// Ranges print as r<id> (r0 the resource path's entity, lambda variables and expands after):
//   Orders?$filter=Customer/Country eq 'DE'&$select=Number
//   →  Orders r0 {Guid,Number} filter (r0.Customer/Country eq 'DE':string)

import type { BoundCollectionRead, BoundEntityByKey, BoundEntityRead, BoundExpression, BoundOrderby } from '../../../server/odata/semantic/bound.ts'

export function boundRead(read: BoundCollectionRead | BoundEntityByKey): string {
  const parts = [read.entity.setName]
  if (read.kind === 'entity' && read.key) parts[0] += `(${read.key})`
  if (read.parent) parts.unshift(`${read.parent.navigation.entity.setName}(${read.parent.key})/${read.parent.navigation.name} →`)
  parts.push(entityRead(read.read))
  if (read.kind === 'collection') {
    if (read.filter) parts.push(`filter ${expression(read.filter)}`)
    if (read.orderby.length) parts.push(`orderby ${orderby(read.orderby)}`)
    if (read.top !== undefined) parts.push(`top ${read.top}`)
    if (read.skip) parts.push(`skip ${read.skip}`)
    if (read.count) parts.push('count')
  }
  return parts.join(' ')
}

function entityRead(read: BoundEntityRead): string {
  const names = [...read.select, ...read.virtuals].map((item) => item.publicName)
  const needs = read.needs.length ? ` needs(${read.needs.map((item) => item.property.name).join(',')})` : ''
  const expands = read.expand.map((expand) => {
    const options = [entityRead(expand.read)]
    if (expand.filter) options.push(`filter ${expression(expand.filter)}`)
    if (expand.orderby.length) options.push(`orderby ${orderby(expand.orderby)}`)
    if (expand.top !== undefined) options.push(`top ${expand.top}`)
    if (expand.skip) options.push(`skip ${expand.skip}`)
    if (expand.count) options.push('count')
    return ` ${expand.publicName}: ${options.join(' ')}`
  })
  return `r${read.range.id} {${names.join(',')}}${needs}${expands.length ? ` expand[${expands.join(';').trim()}]` : ''}`
}

function orderby(items: readonly BoundOrderby[]): string {
  return items.map((item) => `${expression(item.expression)}${item.descending ? ' desc' : ''}`).join(', ')
}

export function expression(node: BoundExpression): string {
  const path = (range: { id: number }, via: readonly { name: string }[], last: string) => `r${range.id}.${[...via.map((v) => v.name), last].join('/')}`
  switch (node.kind) {
    case 'literal':
      return node.type === 'null' ? 'null' : `${typeof node.value === 'string' ? `'${node.value}'` : String(node.value)}:${node.type}`
    case 'property':
      return path(node.range, node.via, node.property.name)
    case 'referenceKey':
      return `${path(node.range, node.via, node.reference.name)}:key`
    case 'binary':
      return `(${expression(node.left)} ${node.op} ${expression(node.right)})`
    case 'not':
      return `not ${expression(node.operand)}`
    case 'negate':
      return `-${expression(node.operand)}`
    case 'call':
      return `${node.name}(${node.args.map(expression).join(', ')})`
    case 'lambda':
      return `${path(node.range, node.via, node.collection.name)}/${node.op}(r${node.variable.id}: ${node.predicate ? expression(node.predicate) : ''})`
    case 'count':
      return `${path(node.range, node.via, node.collection.name)}/$count${node.filter ? `(${expression(node.filter)})` : ''}`
    case 'list':
      return `[${node.items.map(expression).join(', ')}]`
    case 'aggregateRef':
      return `@${node.name}`
    case 'search':
      return `r${node.range.id}/$search`
  }
}
