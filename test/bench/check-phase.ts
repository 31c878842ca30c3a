// The checking phase, per system: every operation's answer is judged (check-answers.ts), then the
// SQL statements of a few further requests are counted (statement-count.ts). Requests run one at
// a time here, so what PostgreSQL sees in the system's database belongs to them.
import { checkReadAnswer, checkStatus, checkTotal } from './check-answers.ts'
import type { Check } from './check-answers.ts'
import { httpRequest } from './http-request.ts'
import type { StatementCounter, StatementSample } from './statement-count.ts'
import type { System } from './systems.ts'
import { W1_TOTAL, W2_PATCHED_QUANTITY, W2_TOTAL } from './workload.ts'
import type { ReadOperation, Workload, WriteOperation } from './workload.ts'
import { createOrder, deleteOrders, orderTotal, patchLine } from './write-requests.ts'
import type { OrderLedger } from './write-requests.ts'

export type OperationCheck = { check: Check; statements: StatementSample | null }

export async function checkSystem(
  system: System, workload: Workload, operations: (ReadOperation | WriteOperation)[],
  counter: StatementCounter, countedRequests: number, ledger: OrderLedger,
): Promise<Map<string, OperationCheck>> {
  await system.authenticate()
  const counted = system.routed && system.database !== undefined
  const count = async (request: () => Promise<void>) =>
    counted ? counter.measure(system.database!, countedRequests, request) : null
  const checks = new Map<string, OperationCheck>()
  const toDelete: string[] = []

  for (const operation of operations) {
    if (operation.kind === 'read') {
      const get = () => httpRequest(system.origin, 'GET', system.root + operation.path, system.headers)
      const check = checkReadAnswer(operation, await get())
      checks.set(operation.id, { check, statements: check.ok ? await count(async () => void (await get())) : null })
    } else if (operation.id === 'W1') {
      const { order, answer } = await createOrder(system, workload, ledger)
      toDelete.push(order.guid)
      const problems = checkTotal(answer, W1_TOTAL, 'W1 answer')
      const check = { ok: problems.length === 0, contentOk: null, problems }
      const statements = check.ok
        ? await count(async () => void toDelete.push((await createOrder(system, workload, ledger)).order.guid))
        : null
      checks.set(operation.id, { check, statements })
    } else {
      const { check, statements } = await checkPatch(system, workload, ledger, toDelete, count)
      checks.set(operation.id, { check, statements })
    }
  }

  // The runner deletes what it created through the API (WORKLOAD.md §4); a failure is reported
  // with the writes but does not stop them being measured.
  const deletion = await deleteOrders(system, workload, toDelete)
  const writeCheck = checks.get('W1') ?? checks.get('W2')
  if (writeCheck) writeCheck.check.problems.push(...deletion)
  return checks
}

/** W2: after `{"Quantity": 7}` on an order's first line, the order's Total must follow. */
async function checkPatch(
  system: System, workload: Workload, ledger: OrderLedger, toDelete: string[],
  count: (request: () => Promise<void>) => Promise<StatementSample | null>,
): Promise<OperationCheck> {
  const { order, answer } = await createOrder(system, workload, ledger)
  toDelete.push(order.guid)
  const created = checkStatus(answer, 'W2 needs a created order')
  if (created.length > 0) return { check: { ok: false, contentOk: null, problems: created }, statements: null }
  const [first, second] = order.lineGuids
  const problems = [
    ...checkStatus(await patchLine(system, workload, first, W2_PATCHED_QUANTITY), 'W2 PATCH'),
    ...checkTotal(await orderTotal(system, workload, order.guid), W2_TOTAL, 'W2 Total after PATCH'),
  ]
  const check = { ok: problems.length === 0, contentOk: null, problems }
  let quantity = 0
  const statements = check.ok
    ? await count(async () => void (await patchLine(system, workload, second, (quantity++ % 10) + 1)))
    : null
  return { check, statements }
}
