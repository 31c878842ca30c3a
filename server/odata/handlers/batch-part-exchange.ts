// One request of a $batch as the handlers see a request (Exchange, odata-routes.ts): its
// method, path, query, headers and body, read from the batch part; the answer the handler
// gives (status, headers, body) kept for the batch's answer. The batch's own request lends
// what the part has not (the host, the caller, OData-Version). No Koa, no Node request: the
// handlers do not know the difference.

import { parse as parseQuery } from 'node:querystring'
import { Readable } from 'node:stream'
import type { ApiState } from '../../http/api-state.ts'
import type { ApiContext, Exchange } from './exchange.ts'

export class PartExchange implements Exchange {
  readonly method: string
  readonly path: string
  readonly url: string
  readonly querystring: string
  readonly query: Record<string, string | string[] | undefined>
  readonly protocol: string
  readonly host: string
  readonly state: ApiState
  readonly request: { readonly body?: unknown }
  readonly response: { get(name: string): string | string[] | number | undefined }
  /** The answer's headers, as the handler set them. */
  readonly headers = new Map<string, string>()
  type = ''
  readonly #requestHeaders: Readonly<Record<string, string>>
  #status?: number
  #body: unknown

  /** `path`: under /api/, as sent (percent-encoded); `headers`: names in lower case. */
  constructor(batch: ApiContext, state: ApiState, method: string, path: string, querystring: string, headers: Readonly<Record<string, string>>, body: unknown) {
    this.method = method
    this.path = path
    this.querystring = querystring
    this.url = querystring ? `${path}?${querystring}` : path
    this.query = parseQuery(querystring)
    this.protocol = batch.protocol
    this.host = batch.host
    this.state = state
    this.request = { body }
    this.response = { get: (name) => batch.response.get(name) }
    this.#requestHeaders = headers
  }

  get(name: string): string {
    return this.#requestHeaders[name.toLowerCase()] ?? ''
  }

  set(name: string, value: string): void {
    this.headers.set(name, value)
  }

  vary(field: string): void {
    const fields = this.headers.get('Vary')
    this.headers.set('Vary', fields ? `${fields}, ${field}` : field)
  }

  /** As Koa's: the first of `types` the part's Accept names, the first of them without one. */
  accepts(...types: string[]): string | false {
    const accept = this.get('Accept')
    if (!accept || accept.includes('*/*')) return types[0] ?? false
    return types.find((type) => accept.includes(type)) ?? false
  }

  /** As Koa's: 404 until an answer is given, 200 once a body is (204 for none) unless set. */
  get status(): number {
    return this.#status ?? (this.#body === undefined ? 404 : this.#body === null ? 204 : 200)
  }

  set status(status: number) {
    this.#status = status
  }

  get body(): unknown {
    return this.#body
  }

  set body(body: unknown) {
    this.#body = body
  }

  /** The answer's body as text: a streamed collection read is read to its end. */
  async text(): Promise<string> {
    const body = this.#body
    if (body === undefined || body === null) return ''
    if (typeof body === 'string') return body
    if (body instanceof Readable) {
      const chunks: Buffer[] = []
      for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))
      return Buffer.concat(chunks).toString('utf8')
    }
    if (Buffer.isBuffer(body)) return body.toString('utf8')
    return JSON.stringify(body)
  }
}
