// The one place that writes error responses. A ServiceError becomes its OData error body;
// a database failure is mapped once (persistence/database-errors.ts); anything else is a bug:
// 500 with the request id, the stack in the log, never in the body.

import type { Context, Next } from 'koa'
import { RequestError, ServiceError } from '../errors.ts'
import { databaseCause, translateDatabaseError } from '../persistence/database-errors.ts'
import type { ApiState } from './api-state.ts'
import { Abandoned } from './client-disconnect.ts'

export async function errorBoundary(ctx: Context & { state: ApiState }, next: Next): Promise<void> {
  try {
    await next()
  } catch (thrown) {
    const error = thrown instanceof ServiceError ? thrown : (translateDatabaseError(thrown) ?? fromKoa(thrown))
    const abandonedBy = error && abandoned(ctx.state, thrown, error)
    if (abandonedBy === 'client') {
      // Nobody reads this answer. 499 (nginx's "client closed request") keeps the log and the
      // metrics from blaming the database for a cancel the client caused.
      ctx.status = CLIENT_CLOSED_REQUEST
      ctx.body = { error: errorBody(error!) }
      ctx.state.log.info({ ...ctx.state.who, status: CLIENT_CLOSED_REQUEST }, 'request abandoned: the client closed its connection before the answer')
    } else if (abandonedBy === 'shutdown') {
      // Whatever the cut made the database say: what it did is undone, and the operator may want to know whose it was.
      ctx.status = 503
      ctx.body = { error: errorBody(ctx.state.signal!.reason as Abandoned) }
      ctx.state.log.warn({ ...ctx.state.who, status: 503 }, 'request cut: still running when the shutdown ended it after Server:ShutdownTimeoutSeconds')
    } else if (error) {
      // The handler may have set them before it failed; an error answer never carries them.
      for (const name of SUCCESS_HEADERS) ctx.remove(name)
      ctx.status = error.status
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value)
      ctx.body = { error: errorBody(error) }
      // The client's message may quote its query: the log's does not (logged-url.ts).
      const message = ctx.state.loggedMessage(error, ctx.originalUrl)
      // A 500 the server names (a plugin's fault, a wrong key) is still the operator's to fix.
      // What plugin code threw is kept as the cause: its stack names the plugin's file and line.
      if (error.status === 500) ctx.state.log.error({ ...ctx.state.who, status: error.status, code: error.code, message, err: error.cause }, 'request failed')
      // The client's message says what it means (unreachable, out of time); the operator needs what PostgreSQL said.
      else if (error.status >= 500 && error !== thrown) ctx.state.log.warn({ ...ctx.state.who, status: error.status, code: error.code, message, cause: databaseCause(thrown) }, 'request refused: the database failed it')
      // Ours, not the database's, yet no fault of the client either (no connection free in time, a tenant behind its schema or being moved): the operator's to see.
      else if (error.status >= 500) ctx.state.log.warn({ ...ctx.state.who, status: error.status, code: error.code, message }, 'request refused: the service could not serve it')
      // The target tells apart refusals of one code: which limit a 429 or a QueryLimitExceeded met.
      else ctx.state.log.info({ ...ctx.state.who, status: error.status, code: error.code, target: error.target, message }, 'request refused')
    } else {
      ctx.state.log.error({ ...ctx.state.who, err: thrown }, 'unhandled error')
      ctx.status = 500
      ctx.body = {
        error: { code: 'InternalError', message: `An internal error occurred; quote request id ${ctx.state.requestId} when reporting it.` },
      }
    }
    // The version negotiated for the request (odata-headers.ts), as a success would name it;
    // 4.0 when the request failed before it was negotiated.
    if (!ctx.response.get('OData-Version')) ctx.set('OData-Version', '4.0')
  }
}

const CLIENT_CLOSED_REQUEST = 499

/**
 * Who made the request fail by closing its connection (http/client-disconnect.ts), if anyone:
 * the abandon itself, or what it caused in the database (the statement cancelled, the
 * connection discarded). A bug is still a bug, and a client error still the client's.
 */
function abandoned(state: ApiState, thrown: unknown, error: ServiceError): Abandoned['by'] | undefined {
  const reason = state.signal?.aborted ? state.signal.reason : undefined
  if (!(reason instanceof Abandoned)) return undefined
  return thrown === reason || error.status > 500 ? reason.by : undefined
}

/** Headers of a write's success: a client must not take an error for a saved entity. */
const SUCCESS_HEADERS = ['Location', 'OData-EntityId', 'ETag', 'Preference-Applied']

/** Details beyond the first few (errors.ts ERROR_BOUNDS) are counted in an instance annotation. */
export function errorBody(error: ServiceError): Record<string, unknown> {
  return {
    code: error.code,
    message: error.message,
    ...(error.target ? { target: error.target } : {}),
    ...(error.details.length ? { details: error.details } : {}),
    ...(error.omittedDetails ? { '@entityctl.omittedDetails': error.omittedDetails } : {}),
  }
}

/** Errors raised by the body parser (413, 415, bad JSON) carry a 4xx status. */
function fromKoa(thrown: unknown): ServiceError | undefined {
  const error = thrown as { status?: number; message?: string; type?: string; limit?: unknown }
  if (!error || typeof error.status !== 'number' || error.status < 400 || error.status >= 500) return undefined
  // raw-body names the limit it applied: ApiOptions:MaxBodyBytes.
  if (error.status === 413) return typeof error.limit === 'number' ? RequestError.payloadTooLarge(error.limit) : new ServiceError('PayloadTooLarge', 'The request body is larger than ApiOptions:MaxBodyBytes.')
  if (error.status === 415) return new ServiceError('UnsupportedMediaType', error.message ?? 'Unsupported media type.')
  return new ServiceError('InvalidRequest', `The request body is not valid: ${error.message}`)
}
