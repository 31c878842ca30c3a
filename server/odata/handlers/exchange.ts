// What every OData handler is handed: the exchange it reads its request from and writes its
// answer to (a Koa context, or a part of a $batch), and the scope of the request, resolved once
// by the routes (odata-routes.ts) before the handler for its method runs.

import type { Context } from 'koa'
import type { ApiState } from '../../http/api-state.ts'
import type { Session } from '../../persistence/session.ts'
import type { Target } from '../semantic/bind-path.ts'
import type { JsonFormat, Media } from './negotiate.ts'
import type { OdataServices } from './odata-services.ts'

export type ApiContext = Context & { state: ApiState }

/**
 * What a handler reads of its request and writes of its answer: a Koa context for a request
 * of its own, a part of a `$batch` (odata/handlers/batch-part-exchange.ts) otherwise, so a part
 * runs through the very handlers a request does.
 */
export interface Exchange {
  readonly method: string
  /** The path, /api/ included. */
  readonly path: string
  readonly url: string
  readonly querystring: string
  readonly query: Record<string, string | string[] | undefined>
  readonly protocol: string
  readonly host: string
  readonly state: ApiState
  readonly request: { readonly body?: unknown }
  readonly response: { get(name: string): string | string[] | number | undefined }
  get(name: string): string
  set(name: string, value: string): void
  /** Adds `field` to the answer's Vary header, as Koa's `ctx.vary`. */
  vary(field: string): void
  accepts(...types: string[]): string | false
  status: number
  type: string
  body: unknown
}

/** Everything a handler needs for one request, resolved once. */
export interface RequestScope {
  readonly services: OdataServices
  readonly state: ApiState
  readonly session: Session
  readonly target: Target
  /** What the answer is written as (negotiate.ts): XML or text for $metadata and $count, else JSON. */
  readonly media: Media
  /** The JSON parameters the client asked for: odata.metadata, IEEE754Compatible. */
  readonly format: JsonFormat
}
