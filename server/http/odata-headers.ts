// Protocol headers every answer carries, and the request checks OData asks for:
// OData-Version on every response, 415 for a body that is not JSON, OData-MaxVersion
// honoured (4.01 when the client accepts it, decisions.md "Versioning").
//
// The CSRF handshake of SAP clients (UI5 sends `X-CSRF-Token: Fetch` before its first write,
// then echoes the token it got) is answered, and the token a write carries is not checked:
// CSRF rides on credentials a browser adds by itself (cookies), and this service accepts
// only an Authorization header, which a page of another site cannot make the browser send.
// The token is a fixed word saying so.

import type { Context, Next } from 'koa'
import { RequestError, ServiceError } from '../errors.ts'

const BATCH = /\/\$batch\/?$/i

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/** What a client fetching a CSRF token gets: any value serves, as none is checked. */
export const CSRF_TOKEN = 'unused-bearer-auth'

export async function odataHeaders(ctx: Context, next: Next): Promise<void> {
  const maxVersion = ctx.get('OData-MaxVersion')
  ctx.set('OData-Version', maxVersion && Number.parseFloat(maxVersion) >= 4.01 ? '4.01' : '4.0')
  if (ctx.get('X-CSRF-Token').toLowerCase() === 'fetch') ctx.set('X-CSRF-Token', CSRF_TOKEN)
  if (BODY_METHODS.has(ctx.method) && Number(ctx.get('Content-Length') || 0) > 0) {
    const type = ctx.get('Content-Type')
    // A $batch may be multipart/mixed (odata/handlers/batch-handler.ts reads it).
    if (type && !/^application\/json\b/i.test(type) && !(BATCH.test(ctx.path) && /^multipart\/mixed\b/i.test(type))) throw RequestError.unsupportedMediaType(type)
  }
  const odataVersion = ctx.get('OData-Version')
  if (odataVersion && Number.parseFloat(odataVersion) > 4.01) {
    throw new ServiceError('InvalidRequest', `OData-Version ${odataVersion} is not supported; this service speaks 4.0 and 4.01.`)
  }
  await next()
}
