// Cross-origin calls from browser pages (ApiOptions:Cors), before authentication: a browser
// sends its preflight (OPTIONS with Access-Control-Request-Method) without the page's
// credentials, so it is answered here, 204, and goes no further. Every other answer to an
// allowed origin, errors included, says so and exposes the headers an OData client reads.
// Off (no origin configured): nothing here runs, and no answer carries a CORS header.
//
//   OPTIONS /api/Customers  Origin: https://app.example.com  Access-Control-Request-Method: PATCH
//   →  204  Access-Control-Allow-Origin: https://app.example.com  Access-Control-Allow-Methods: …

import type { Context, Next } from 'koa'
import type { Config } from '../config/load-config.ts'

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'

/** Request headers the service reads, allowed whatever a preflight asks for. */
const ALLOWED_HEADERS = [
  'Accept', 'Accept-Language', 'Authorization', 'Content-Type', 'Content-ID', 'If-Match', 'If-None-Match', 'Isolation',
  'OData-Version', 'OData-MaxVersion', 'Prefer', 'Workflow-Id', 'Workflow-Index', 'X-CSRF-Token', 'X-Requested-With',
]

/** A header name (an RFC 9110 token): what a preflight's Access-Control-Request-Headers may name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** Response headers a script may read; the CORS-safelisted ones (Content-Type …) are always readable. */
const EXPOSED_HEADERS = [
  'ETag', 'Location', 'OData-EntityId', 'OData-Version', 'Preference-Applied', 'Retry-After', 'WWW-Authenticate', 'X-CSRF-Token',
].join(', ')

export function cors(config: Config['ApiOptions']) {
  const origins = config['Cors:AllowedOrigins'].split(',').map((origin) => origin.trim().replace(/\/$/, '')).filter(Boolean)
  const anyOrigin = origins.includes('*')
  const credentials = config['Cors:AllowCredentials']
  // load-config.ts refuses '*' with credentials.
  const allowed = new Set(origins)
  const maxAge = String(config['Cors:MaxAgeSeconds'])

  return async function corsHeaders(ctx: Context, next: Next): Promise<void> {
    if (allowed.size === 0) return next()
    const origin = ctx.get('Origin')
    ctx.vary('Origin')
    if (!origin || !(anyOrigin || allowed.has(origin))) return next()
    ctx.set('Access-Control-Allow-Origin', anyOrigin ? '*' : origin)
    if (credentials) ctx.set('Access-Control-Allow-Credentials', 'true')
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.vary('Access-Control-Request-Headers')
      ctx.set('Access-Control-Allow-Methods', ALLOWED_METHODS)
      ctx.set('Access-Control-Allow-Headers', allowedHeaders(ctx.get('Access-Control-Request-Headers')))
      ctx.set('Access-Control-Max-Age', maxAge)
      ctx.status = 204
      return
    }
    ctx.set('Access-Control-Expose-Headers', EXPOSED_HEADERS)
    return next()
  }
}

/**
 * The headers the service reads, and those the preflight asks for: client libraries send their
 * own (the OpenUI5 V4 model sends `X-SAP-Security-Session` with $metadata and
 * `sap-cancel-on-close` with reads), which the service ignores, and naming them here is what
 * lets the browser send the request at all. The origin is the boundary: a header gives an
 * allowed page nothing the service would act on.
 */
function allowedHeaders(requested: string): string {
  const names = new Map(ALLOWED_HEADERS.map((name) => [name.toLowerCase(), name]))
  for (const name of requested.split(',').map((item) => item.trim())) {
    if (HEADER_NAME.test(name) && !names.has(name.toLowerCase())) names.set(name.toLowerCase(), name)
  }
  return [...names.values()].join(', ')
}
