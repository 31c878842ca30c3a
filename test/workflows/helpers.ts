// What the workflow tests share: a client that starts a workflow and numbers its requests,
// and the demo data (a customer, products, an order with lines) saved outside any workflow.

import { expect } from 'vitest'
import { call } from '../support/test-server.ts'

type Answer = Awaited<ReturnType<typeof call>>

export class WorkflowClient {
  readonly api: string
  readonly token: string
  readonly id: string
  /** The last accepted index; a request that fails leaves it, as it leaves the workflow. */
  index = 0

  constructor(api: string, token: string, id: string) {
    this.api = api
    this.token = token
    this.id = id
  }

  static async start(api: string, token: string): Promise<WorkflowClient> {
    const created = await call(`${api}/workflow`, { method: 'POST', token })
    expect(created.status).toBe(200)
    expect(created.body).toEqual({ message: expect.any(String), workflowId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    return new WorkflowClient(api, token, created.body.workflowId)
  }

  headers(index: number): Record<string, string> {
    return { 'Workflow-Id': this.id, 'Workflow-Index': String(index) }
  }

  /** Sends the next request of the workflow; the index moves on when it is accepted. */
  async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const answer = await this.at(this.index + 1, method, path, body, headers)
    if (answer.status < 400) this.index++
    return answer
  }

  get(path: string): Promise<Answer> {
    return this.send('GET', path)
  }

  /** A request with an explicit index, for the index rules. */
  at(index: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    return call(`${this.api}/${path}`, { method, token: this.token, body, headers: { ...this.headers(index), ...headers } })
  }

  commit(index = this.index + 1): Promise<Answer> {
    return call(`${this.api}/workflow/commit`, { method: 'POST', token: this.token, headers: this.headers(index) })
  }

  abort(index = this.index + 1): Promise<Answer> {
    return call(`${this.api}/workflow/abort`, { method: 'POST', token: this.token, headers: this.headers(index) })
  }
}

export interface SalesData {
  readonly customer: string
  readonly products: readonly string[]
  readonly order: string
  readonly lines: readonly string[]
}

/** A customer, two products (12.99, 63.78) and order `number` with lines of 2 and 3: total 217.32. */
export async function saveSalesData(api: string, token: string, number: number): Promise<SalesData> {
  const post = async (path: string, body: unknown) => {
    const answer = await call(`${api}/${path}`, { method: 'POST', token, body })
    expect(answer.status, answer.text).toBe(200)
    return answer.body
  }
  const customer = await post('Customers', { Name: `Customer ${number}` })
  const products = [
    await post('Products', { Code: `P${number}A`, Name: 'Widget', Price: 12.99 }),
    await post('Products', { Code: `P${number}B`, Name: 'Gadget', Price: 63.78 }),
  ]
  const order = await post('Orders?$expand=Lines($select=Quantity;$orderby=Quantity)', {
    Number: number,
    'Customer@odata.bind': `Customers(${customer.Guid})`,
    OrderDate: '2026-01-15',
    Lines: [
      { 'Product@odata.bind': `Products(${products[0].Guid})`, Quantity: 2 },
      { 'Product@odata.bind': `Products(${products[1].Guid})`, Quantity: 3 },
    ],
  })
  return { customer: customer.Guid, products: products.map((p) => p.Guid), order: order.Guid, lines: order.Lines.map((l: any) => l.Guid) }
}
