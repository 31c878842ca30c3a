// The workload as the runner uses it: read operations with their URLs and expectations, and the
// write operations' request bodies, all from the shared workload files (workload.json,
// gen-dataset.mjs for Guids, the generated expected.json), never restated here.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

export type ReadExpectation = { entity?: boolean; rows?: number; count?: number; nestedOrders?: number; nestedLines?: number }

export type ReadOperation = {
  kind: 'read'
  id: string
  name: string
  /** Relative to the service root, spaces as %20 (WORKLOAD.md §3). */
  path: string
  expect: ReadExpectation
  /** Q5: a path such as `Customer/Country` by which rows are sorted before comparing. */
  unorderedBy?: string
  expected: unknown
}

export type WriteOperation = { kind: 'write'; id: 'W1' | 'W2'; name: string }

export type NewOrder = { guid: string; lineGuids: string[]; body: string }

export type Workload = {
  reads: ReadOperation[]
  writes: WriteOperation[]
  firstWriteNumber: number
  createOrderPath: string
  newOrder(number: number): NewOrder
  patchLinePath(line: string): string
  orderTotalPath(order: string): string
  deleteOrderPath(order: string): string
}

// WORKLOAD.md §4: products 11, 12, 13 at 12.99, 63.78, 3.57 with quantities 2, 3, 5; then the
// first line patched to 7.
export const W1_TOTAL = 235.17
export const W2_PATCHED_QUANTITY = 7
export const W2_TOTAL = 300.12

type WorkloadFile = {
  queries: { id: string; name: string; path: string; expect: ReadExpectation; unorderedBy?: string }[]
  writes: {
    id: 'W1' | 'W2'
    name: string
    path: string
    customerIndex?: number
    orderDate?: string
    status?: string
    numberBase?: number
    lines?: { productIndex: number; quantity: number }[]
  }[]
  support: { orderTotal: string; deleteOrder: string }
}

type GuidOf = (entity: string, index: number) => string

export async function readWorkload(workloadDir: string, dataDir: string): Promise<Workload> {
  const file = JSON.parse(readFileSync(join(workloadDir, 'workload.json'), 'utf8')) as WorkloadFile
  // The generator's own row counts (its summary, equal to workload.json's at scale 1, which
  // gen-dataset.mjs checks) are what a scaled dataset is judged by.
  const { results: expected, summary } = JSON.parse(readFileSync(join(dataDir, 'expected.json'), 'utf8')) as {
    results: Record<string, unknown>
    summary: Record<string, ReadExpectation>
  }
  const generator = (await import(pathToFileURL(join(workloadDir, 'gen-dataset.mjs')).href)) as { guid: GuidOf }

  const reads: ReadOperation[] = file.queries.map((query) => ({
    kind: 'read',
    id: query.id,
    name: query.name,
    path: query.path.replaceAll(' ', '%20'),
    expect: summary[query.id] ?? query.expect,
    unorderedBy: query.unorderedBy,
    expected: expected[query.id],
  }))
  const create = file.writes.find((write) => write.id === 'W1')
  const patch = file.writes.find((write) => write.id === 'W2')
  if (!create?.lines || !patch) throw new Error('workload.json: W1 with lines and W2 expected')

  const customer = `Customers(${generator.guid('Customer', create.customerIndex ?? 0)})`
  const products = create.lines.map((line) => `Products(${generator.guid('Product', line.productIndex)})`)
  const withKey = (template: string, key: string) => template.replace('{guid}', key)

  return {
    reads,
    writes: [create, patch].map((write) => ({ kind: 'write', id: write.id, name: write.name })),
    firstWriteNumber: create.numberBase ?? 1_000_000_000,
    createOrderPath: `${create.path}?$select=Total`,
    newOrder(number) {
      const guid = randomUUID()
      const lines = create.lines!.map((line, i) => ({
        Guid: randomUUID(), 'Product@odata.bind': products[i], Quantity: line.quantity,
      }))
      const body = JSON.stringify({
        Guid: guid, Number: number, 'Customer@odata.bind': customer,
        OrderDate: create.orderDate, Status: create.status, Lines: lines,
      })
      return { guid, lineGuids: lines.map((line) => line.Guid), body }
    },
    patchLinePath: (line) => withKey(patch.path, line),
    orderTotalPath: (order) => withKey(file.support.orderTotal, order),
    deleteOrderPath: (order) => withKey(file.support.deleteOrder, order),
  }
}
