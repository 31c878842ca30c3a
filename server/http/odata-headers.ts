// Protocol headers every answer carries, and the request checks OData asks for:
// OData-Version on every response, 415 for a body that is not JSON (but to a property, whose
// writes are answered by their method whatever the body), OData-MaxVersion
// honoured (4.01 when the client accepts it, decisions.md "Versioning"). A request written in
// a version this service does not speak (OData-Version other than 4.0 or 4.01), or accepting
// only answers below 4.0 (OData-MaxVersion 3.0), cannot be served: 400, as OData 4.01 Part 1
// §8.2.6 and §8.2.7 ask, and so is a header that is not a version at all. A request of a
// $batch is refused for the same (refuseAsAlone), in its own answer. So is a request asking for
// snapshot isolation, which the service does not give (412, §8.2.5).
//
// The CSRF handshake of SAP clients (UI5 sends `X-CSRF-Token: Fetch` before its first write,
// then echoes the token it got) is answered, and the token a write carries is not checked:
// CSRF rides on credentials a browser adds by itself (cookies), and this service accepts
// only an Authorization header, which a page of another site cannot make the browser send.
// The token is a fixed word saying so.

import type { Middleware } from 'koa'
import { RequestError, ServiceError } from '../errors.ts'

const BATCH = /\/\$batch\/?$/i

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/** What a client fetching a CSRF token gets: any value serves, as none is checked. */
export const CSRF_TOKEN = 'unused-bearer-auth'

/**
 * `bodyless`: whether a path's writes are answered without their body (a property's, which
 * odata/handlers/odata-routes.ts answers 501 or 405): its type is not checked there, and is
 * asked only of a body that is not JSON.
 */
export function odataHeaders(bodyless: (path: string) => boolean): Middleware {
  return async (ctx, next) => {
    const maxVersion = servableVersions(ctx)
    ctx.set('OData-Version', maxVersion !== undefined && maxVersion >= 4.01 ? '4.01' : '4.0')
    refuseIsolation(ctx)
    if (ctx.get('X-CSRF-Token').toLowerCase() === 'fetch') ctx.set('X-CSRF-Token', CSRF_TOKEN)
    if (BODY_METHODS.has(ctx.method) && Number(ctx.get('Content-Length') || 0) > 0) {
      // A $batch may be multipart/mixed (odata/handlers/batch-handler.ts reads it).
      requireJsonBody(ctx.get('Content-Type'), BATCH.test(ctx.path) ? /^multipart\/mixed\b/i : undefined, () => bodyless(ctx.path))
    }
    await next()
  }
}

/**
 * What a request alone is refused for, for a request of a $batch (odata/handlers/batch-handler.ts):
 * its OData-Version and OData-MaxVersion, and the type of its body (unless `bodyless`, as above).
 */
export function refuseAsAlone(part: { get(name: string): string; readonly method: string }, hasBody: boolean, bodyless: () => boolean): void {
  servableVersions(part)
  refuseIsolation(part)
  if (BODY_METHODS.has(part.method) && hasBody) requireJsonBody(part.get('Content-Type'), undefined, bodyless)
}

/**
 * `Isolation: snapshot` (4.0: `OData-Isolation`) asks that a request, the pages after it and a
 * batch's requests all see the data of one moment. This service does not keep snapshots across
 * requests, and OData 4.01 Part 1 §8.2.5 has a service that does not support it refuse the
 * request unprocessed: 412, rather than answer without the isolation asked for.
 */
function refuseIsolation(request: HeaderSource): void {
  for (const header of ['Isolation', 'OData-Isolation']) {
    if (request.get(header).trim() !== '') {
      throw new ServiceError('PreconditionFailed', `${header}: ${request.get(header).trim().slice(0, 40)} is not supported: this service does not read a snapshot across requests, pages or the requests of a batch; send the request without it.`, { target: header })
    }
  }
}

/** 400 for versions this service cannot serve; the OData-MaxVersion asked for, if any. */
function servableVersions(request: HeaderSource): number | undefined {
  const maxVersion = versionOf(request, 'OData-MaxVersion')
  if (maxVersion !== undefined && maxVersion < 4) {
    throw RequestError.invalid(`OData-MaxVersion ${request.get('OData-MaxVersion')} is below 4.0; this service speaks 4.0 and 4.01.`)
  }
  const version = versionOf(request, 'OData-Version')
  if (version !== undefined && version !== 4 && version !== 4.01) {
    throw RequestError.invalid(`OData-Version ${request.get('OData-Version')} is not supported; this service speaks 4.0 and 4.01.`)
  }
  return maxVersion
}

function requireJsonBody(type: string, alsoAccepted: RegExp | undefined, bodyless: () => boolean): void {
  if (type && !/^application\/json\b/i.test(type) && !alsoAccepted?.test(type) && !bodyless()) throw RequestError.unsupportedMediaType(type)
}

interface HeaderSource {
  get(name: string): string
}

/** `4.01` of `OData-MaxVersion: 4.01` (the grammar is digits, a dot, digits); undefined when the header is absent or empty. */
function versionOf(request: HeaderSource, header: 'OData-Version' | 'OData-MaxVersion'): number | undefined {
  const value = request.get(header).trim()
  if (value === '') return undefined
  if (!/^\d+\.\d+$/.test(value)) throw RequestError.invalid(`${header} '${value}' is not a version such as 4.0 or 4.01.`)
  return Number(value)
}
