// The most entities a bound read can answer with, known before it runs, checked against
// ApiOptions:MaxResultItems. Every entity of the answer counts, nested ones too:
//
//   items(entity)    = 1 + Σ reference expands: items(target)
//                        + Σ collection expands: ($top, or MaxTop without one) × items(member)
//   items(read)      = page × items(entity)      page: $top, or MaxTop (server-driven paging)
//
// An expand without $top is not limited by the statement, so MaxTop stands in for it: the
// estimate is what an answer "of ordinary proportions" could hold, and the byte budget
// (ApiOptions:MaxResponseBytes, enforced while the answer is produced) bounds what it misses.
// $apply answers are aggregated rows, counted as their $top or MaxTop.

import { ServiceError } from '../../errors.ts'
import type { BoundCollectionRead, BoundEntityRead } from '../semantic/bound.ts'

export function collectionItems(read: BoundCollectionRead, maxTop: number): number {
  const page = read.top ?? maxTop
  return read.apply ? page : page * entityItems(read.read, maxTop)
}

export function entityItems(read: BoundEntityRead, maxTop: number): number {
  let items = 1
  for (const expand of read.expand) {
    const members = expand.navigation.kind === 'collection' ? (expand.top ?? maxTop) : 1
    items += members * entityItems(expand.read, maxTop)
  }
  return items
}

/** 400 QueryLimitExceeded before anything runs when `items` is over the budget. */
export function requireWithinItems(items: number, maxResultItems: number): void {
  if (items <= maxResultItems) return
  throw new ServiceError(
    'QueryLimitExceeded',
    `MaxResultItems is ${maxResultItems}; this read could answer with up to ${items} entities ` +
      '(its page times, for each entity, what its expands add; a collection $expand counts its $top, or MaxTop without one). ' +
      'Give the collection expands a smaller $top, or read in smaller pages.',
    { target: 'MaxResultItems' },
  )
}
