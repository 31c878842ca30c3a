// The write operations' requests (WORKLOAD.md §4): W1 creates orders with fresh Guids and unique
// Numbers from 1,000,000,000 on; W2 patches lines of orders created for it, spread so that
// concurrent requests hit different orders. Every order created is remembered, so a system whose
// database the runner cannot reach can still be cleaned through its API.
import { httpRequest } from './http-request.ts'
import type { HttpAnswer } from './http-request.ts'
import type { LoadTarget } from './load-test.ts'
import type { System } from './systems.ts'
import type { Workload } from './workload.ts'

export type OrderLedger = {
  nextNumber(): number
  /** Guids of the orders created (or attempted) per system. */
  created: Map<System, string[]>
}

export function orderLedger(firstNumber: number): OrderLedger {
  let number = firstNumber
  return { nextNumber: () => number++, created: new Map() }
}

function remember(ledger: OrderLedger, system: System, order: string): void {
  const list = ledger.created.get(system) ?? []
  list.push(order)
  ledger.created.set(system, list)
}

export async function createOrder(system: System, workload: Workload, ledger: OrderLedger) {
  const order = workload.newOrder(ledger.nextNumber())
  remember(ledger, system, order.guid)
  const answer = await httpRequest(system.origin, 'POST', system.root + workload.createOrderPath, system.headers, order.body)
  return { order, answer }
}

export function patchLine(system: System, workload: Workload, line: string, quantity: number): Promise<HttpAnswer> {
  const body = JSON.stringify({ Quantity: quantity })
  return httpRequest(system.origin, 'PATCH', system.root + workload.patchLinePath(line), system.headers, body)
}

export function orderTotal(system: System, workload: Workload, order: string): Promise<HttpAnswer> {
  return httpRequest(system.origin, 'GET', system.root + workload.orderTotalPath(order), system.headers)
}

/** W1 under load: every request a new order. */
export function createOrderTarget(system: System, workload: Workload, ledger: OrderLedger): LoadTarget {
  return {
    method: 'POST',
    headers: system.headers,
    next() {
      const order = workload.newOrder(ledger.nextNumber())
      remember(ledger, system, order.guid)
      return { path: system.root + workload.createOrderPath, body: order.body }
    },
  }
}

/**
 * Orders for W2, created through the API before its load, and their lines in the order W2 uses
 * them: request k patches a line of order k mod n, so 16 concurrent requests touch 16 orders.
 */
export async function prepareLinesToPatch(system: System, workload: Workload, ledger: OrderLedger, orders: number) {
  const created: string[][] = []
  const problems: string[] = []
  await inParallel(orders, 8, async () => {
    const { order, answer } = await createOrder(system, workload, ledger)
    if (answer.status >= 200 && answer.status <= 299) created.push(order.lineGuids)
    else if (problems.length < 3) problems.push(`preparing W2: create order: status ${answer.status}`)
  })
  const perOrder = created[0]?.length ?? 0
  const lines: string[] = []
  for (let j = 0; j < perOrder; j++) for (const orderLines of created) lines.push(orderLines[j])
  return { lines, problems }
}

/** W2 under load: quantities cycle 1..10 over the prepared lines. */
export function patchLineTarget(system: System, workload: Workload, lines: string[]): LoadTarget {
  let k = 0
  return {
    method: 'PATCH',
    headers: system.headers,
    next() {
      const line = lines[k % lines.length]
      const body = JSON.stringify({ Quantity: (k % 10) + 1 })
      k++
      return { path: system.root + workload.patchLinePath(line), body }
    },
  }
}

/** `DELETE Orders(<guid>)` for each order; returns the first few failures. */
export async function deleteOrders(system: System, workload: Workload, orders: string[]): Promise<string[]> {
  const problems: string[] = []
  let next = 0
  await inParallel(orders.length, 16, async () => {
    const order = orders[next++]
    const answer = await httpRequest(system.origin, 'DELETE', system.root + workload.deleteOrderPath(order), system.headers)
    // 404: a create that failed under load left nothing to delete.
    if (answer.status !== 204 && answer.status !== 200 && answer.status !== 404 && problems.length < 3) {
      problems.push(`DELETE ${workload.deleteOrderPath(order)}: status ${answer.status}`)
    }
  })
  return problems
}

async function inParallel(total: number, width: number, task: () => Promise<void>): Promise<void> {
  let started = 0
  const worker = async () => {
    while (started < total) {
      started++
      await task()
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, total) }, worker))
}
