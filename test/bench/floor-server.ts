// The floor: the fastest honest answer to the workload's requests, as physical limit to measure
// entityctl against. Plain node:http and pg, no framework, one prepared statement per operation
// (floor-sql.ts) whose JSON PostgreSQL builds; answers are sent as the text PostgreSQL returned,
// never parsed. It routes by URL prefix because it serves exactly the workload's URLs (it is not an
// OData server), and it reads request bodies only where the values are needed (W1, W2).
// No authentication: checking a token is part of what entityctl's figures include.
//
// With `--stack koa` the same handlers answer through entityctl's HTTP stack instead: Koa,
// @koa/router and koa-body, nothing else (the "stack floor", `npm run bench -- --stack-floor`).
// What separates it from the floor is what the mandated framework costs before entityctl
// does anything of its own.
//
// Run as its own process: node test/bench/floor-server.ts --port 8081 --database-url postgres://… [--stack koa]
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { parseArgs } from 'node:util'
import pg from 'pg'
import * as sql from './floor-sql.ts'

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '8081' },
    'database-url': { type: 'string' },
    'pool-size': { type: 'string', default: '8' },
    stack: { type: 'string', default: 'node:http' },
  },
})
if (!args['database-url']) throw new Error('floor-server: --database-url is required')
if (args.stack !== 'node:http' && args.stack !== 'koa') throw new Error('floor-server: --stack is node:http or koa')

const port = Number(args.port)
const pool = new pg.Pool({ connectionString: args['database-url'], max: Number(args['pool-size']) })
// An idle connection that PostgreSQL closes must not take the process down; the next query reconnects.
pool.on('error', (error) => process.stderr.write(`floor: idle connection lost: ${error.message}\n`))
const root = `http://127.0.0.1:${port}/api/`
const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

type Read = { name: string; text: string; context: string }
const read = (name: string, text: string, context: string): Read => ({ name, text, context: `${root}$metadata#${context}` })

// URL (after /api/) prefix → statement; the prefixes stop before any character a client might
// percent-encode (space, quote), so `%20` and `%27` spellings of the same URL route alike.
const collectionReads: [string, Read][] = [
  ['Orders?$filter=Status', read('q2', sql.openOrdersPage, 'Orders(Number,OrderDate,Total)')],
  ['Orders?$filter=Customer/Country', read('q3', sql.germanOrdersWithCount, 'Orders(Number,Total)')],
  ['Customers?$filter=startswith(', read('q4', sql.customersWithOrdersAndLines,
    'Customers(Name,Orders(Number,Total,Lines(Quantity,LineTotal)))')],
  ['Orders?$apply=', read('q5', sql.revenueByCountry, 'Orders(Customer(Country),Revenue)')],
  ['Orders?$filter=Lines/any(', read('q6', sql.ordersWithLargeLine, 'Orders(Number)')],
  ['Products?$filter=contains(', read('q7', sql.steelProducts, 'Products(Code,Name,Price)')],
]
const customerByKey = read('q1', sql.customerByKey, 'Customers(Name,Email,City)/$entity')
const orderTotalByKey = read('order-total', sql.orderTotalByKey, 'Orders(Total)/$entity')
const createdOrder = read('w1', sql.createOrderWithLines, 'Orders(Total)/$entity')

const JSON_HEADERS = { 'content-type': 'application/json;odata.metadata=minimal', 'odata-version': '4.0' }

class HttpError extends Error {
  status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** What a handler answers: a status and, but for 204, the JSON text. */
type Answer = { status: number; body?: string }

/** The request as the handlers need it, whichever stack received it. */
type Request = { method: string; url: string; json<T>(): Promise<T> }

if (args.stack === 'koa') await serveThroughKoa()
else {
  createServer((request, response) => {
    const json = <T>() => readJson<T>(request)
    void answer({ method: request.method ?? '', url: request.url ?? '', json }).then((answered) => send(response, answered))
  }).listen(port, '127.0.0.1', listening)
}

function listening(): void {
  process.stdout.write(`floor (${args.stack}) listening on ${root}\n`)
}

async function answer(request: Request): Promise<Answer> {
  try {
    return await route(request)
  } catch (caught) {
    const error = caught as Error & { status?: number; code?: string }
    // Constraint violations and malformed values are the client's fault (SQLSTATE 22…, 23…).
    const status = error.status ?? (/^2[23]/.test(error.code ?? '') ? 400 : 500)
    return { status, body: JSON.stringify({ error: { code: String(status), message: error.message } }) }
  }
}

async function route(request: Request): Promise<Answer> {
  const url = request.url
  if (!url.startsWith('/api/')) throw new HttpError(404, 'not found')
  const path = url.slice(5)
  switch (request.method) {
    case 'GET': {
      if (path.startsWith('Customers(')) return answerRead(customerByKey, [keyOf(path, 'Customers(')])
      if (path.startsWith('Orders(')) return answerRead(orderTotalByKey, [keyOf(path, 'Orders(')])
      const match = collectionReads.find(([prefix]) => path.startsWith(prefix))
      if (match) return answerRead(match[1], [])
      throw new HttpError(404, 'not a workload URL')
    }
    case 'POST':
      if (path === 'Orders' || path.startsWith('Orders?')) return createOrder(await request.json())
      break
    case 'PATCH':
      if (path.startsWith('OrderLines(')) return patchLine(keyOf(path, 'OrderLines('), await request.json())
      break
    case 'DELETE':
      if (path.startsWith('Orders(')) return deleteOrder(keyOf(path, 'Orders('))
      break
  }
  throw new HttpError(405, 'not a workload operation')
}

async function answerRead(statement: Read, values: unknown[]): Promise<Answer> {
  const { rows } = await pool.query<[string]>({ name: statement.name, text: statement.text, values, rowMode: 'array' })
  if (rows.length === 0) throw new HttpError(404, 'no entity with this key')
  return { status: 200, body: withContext(rows[0][0], statement.context) }
}

type OrderBody = {
  Guid: string
  Number: number
  'Customer@odata.bind': string
  OrderDate: string
  Status: string
  Lines: { Guid: string; 'Product@odata.bind': string; Quantity: number }[]
}

async function createOrder(body: OrderBody): Promise<Answer> {
  const lines = body.Lines ?? []
  const values = [
    body.Guid, body.Number, keyOf(body['Customer@odata.bind'], 'Customers('), body.OrderDate, body.Status,
    lines.map((line) => line.Guid),
    lines.map((line) => keyOf(line['Product@odata.bind'], 'Products(')),
    lines.map((line) => line.Quantity),
  ]
  const { rows } = await pool.query<[string]>({ name: createdOrder.name, text: createdOrder.text, values, rowMode: 'array' })
  if (rows.length === 0) throw new HttpError(400, 'a line names an unknown product')
  return { status: 200, body: withContext(rows[0][0], createdOrder.context) }
}

async function patchLine(key: string, body: { Quantity: number }): Promise<Answer> {
  const result = await pool.query({ name: 'w2', text: sql.patchLineQuantity, values: [key, body.Quantity] })
  if (result.rowCount === 0) throw new HttpError(404, 'no order line with this key')
  return { status: 204 }
}

async function deleteOrder(key: string): Promise<Answer> {
  const result = await pool.query({ name: 'delete-order', text: sql.deleteOrder, values: [key] })
  if (result.rowCount === 0) throw new HttpError(404, 'no order with this key')
  return { status: 204 }
}

/** `Customers(79eb…)?$select=…` → `79eb…` (also for `…@odata.bind` values). */
function keyOf(text: string, prefix: string): string {
  const key = text.slice(prefix.length, prefix.length + 36)
  if (!text.startsWith(prefix) || !GUID.test(key)) throw new HttpError(400, `expected ${prefix}<guid>)`)
  return key
}

/** `{"@odata.etag":…}` → `{"@odata.context":"…","@odata.etag":…}`, by concatenation. */
function withContext(json: string, context: string): string {
  return `{"@odata.context":"${context}",${json.slice(1)}`
}

async function readJson<T>(request: IncomingMessage): Promise<T> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T
  } catch {
    throw new HttpError(400, 'the body is not JSON')
  }
}

function send(response: ServerResponse, { status, body }: Answer): void {
  if (body === undefined) {
    response.writeHead(status, { 'odata-version': '4.0' }).end()
    return
  }
  response.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) }).end(body)
}

/**
 * The same handlers behind Koa, @koa/router and koa-body, as entityctl's app.ts uses them
 * (a router with the service's routes mounted under /api, bodies parsed by koa-body), with
 * none of entityctl's middleware: its request log, authentication, OData headers and so on
 * are entityctl's own cost, not the stack's.
 */
async function serveThroughKoa(): Promise<void> {
  const { default: Koa } = await import('koa')
  const { default: Router } = await import('@koa/router')
  const { koaBody } = await import('koa-body')
  const app = new Koa()
  const router = new Router()
  router.all(/^\/api\//, async (ctx) => {
    const body: unknown = ctx.request.body
    const answered = await answer({ method: ctx.method, url: ctx.url, json: async <T>() => body as T })
    ctx.status = answered.status
    if (answered.body === undefined) ctx.set('OData-Version', '4.0')
    else {
      ctx.set(JSON_HEADERS)
      ctx.body = answered.body
    }
  })
  app.use(koaBody({ parsedMethods: ['POST', 'PATCH'] as never }))
  app.use(router.routes())
  app.listen(port, '127.0.0.1', listening)
}
