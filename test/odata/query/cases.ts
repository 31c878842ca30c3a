// A query case: a request and the body's `value` the reference evaluation expects, etags
// left out. Built over the same dataset the server is seeded with.

import { buildDataset, type Dataset } from '../../fixtures/dataset.ts'
import { keysOf, sortRows, withoutEtags } from './reference.ts'
import { url } from './query-server.ts'
import type { QueryServer } from './query-server.ts'
import { expect } from 'vitest'

export const data: Dataset = buildDataset()

export interface QueryCase {
  readonly path: string
  readonly expected: unknown
}

/** `$filter` on a set: the matching rows' keys, in key order (the service's default order). */
export function filterCase<T extends { Guid: string }>(set: string, rows: readonly T[], filter: string, predicate: (row: T) => boolean, extra: Record<string, string> = {}): QueryCase {
  return { path: url(set, { $filter: filter, ...extra }), expected: keysOf(sortRows(rows.filter(predicate))) }
}

/** A whole request: its `value` must equal `expected` (etags aside). */
export function valueCase(path: string, expected: unknown): QueryCase {
  return { path, expected }
}

export async function expectValue(server: QueryServer, { path, expected }: QueryCase): Promise<void> {
  const response = await server.get(path)
  expect(response.status, response.text).toBe(200)
  expect(withoutEtags(response.body.value)).toEqual(expected)
}

/** Guards the cases themselves: most must select some rows and not all of them. */
export function discriminating(cases: readonly QueryCase[], total: (path: string) => number): number {
  return cases.filter(({ path, expected }) => Array.isArray(expected) && expected.length > 0 && expected.length < total(path)).length
}
