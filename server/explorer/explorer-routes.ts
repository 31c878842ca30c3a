// GET /api/explorer: an HTML page where an integrator signs in (or pastes a token) and tries
// the API with Swagger UI (swagger-ui-dist), fed by /api/openapi.json. The page and its
// assets load without credentials (decisions.md, "Operations surface"): they hold no data,
// and the page sends the token the user gives it with each request. Everything is served
// from local files, never a CDN, so the explorer works on a closed network.
//
//   /api/explorer                        the page (explorer-page.html)
//   /api/explorer/explorer.js|.css       its script and style (this folder)
//   /api/explorer/swagger-ui-bundle.js…  Swagger UI (node_modules/swagger-ui-dist)
//
// Fixed routes without the authenticate stage (http/app.ts).

import type Router from '@koa/router'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ApiState } from '../http/api-state.ts'
import { RequestError } from '../errors.ts'

const HERE = dirname(fileURLToPath(import.meta.url))
const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

interface Asset {
  readonly path: string
  readonly type: string
}

/** The only files served: a name not listed is 404, so no path reaches the file system. */
const ASSETS: Readonly<Record<string, Asset>> = {
  'swagger-ui-bundle.js': { path: join(SWAGGER_UI, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { path: join(SWAGGER_UI, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'favicon-32x32.png': { path: join(SWAGGER_UI, 'favicon-32x32.png'), type: 'image/png' },
  'favicon-16x16.png': { path: join(SWAGGER_UI, 'favicon-16x16.png'), type: 'image/png' },
  'explorer.js': { path: join(HERE, 'explorer.js'), type: 'text/javascript; charset=utf-8' },
  'explorer.css': { path: join(HERE, 'explorer.css'), type: 'text/css; charset=utf-8' },
}

/** Scripts and styles from this origin only; Swagger UI sets inline styles and shows data: images. */
const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'"

const EXPLORER_PATH = '/explorer'
const EXPLORER_ASSET_PATH = '/explorer/:asset'

export function explorerRoutes(router: Router<ApiState>): void {
  // Read once, on first use: the bundle is large and most servers never serve it.
  const loaded = new Map<string, { content: Buffer; etag: string }>()
  const read = (path: string) => {
    let file = loaded.get(path)
    if (!file) {
      const content = readFileSync(path)
      loaded.set(path, (file = { content, etag: `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"` }))
    }
    return file
  }

  router.get(EXPLORER_PATH, async (ctx) => {
    // Relative URLs in the page (explorer/…, openapi.json, auth/signin) resolve against /api/explorer.
    if (ctx.path.endsWith('/')) return ctx.redirect(ctx.path.replace(/\/+$/, ''))
    ctx.set('Cache-Control', 'no-cache')
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY)
    ctx.set('X-Content-Type-Options', 'nosniff')
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = read(join(HERE, 'explorer-page.html')).content
  })

  router.get(EXPLORER_ASSET_PATH, async (ctx) => {
    const name = ctx.params.asset
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
    if (!asset) throw RequestError.notFound(`No file ${name} in the explorer.`)
    // Cached for a day, then revalidated: 304 while the file is unchanged.
    const file = read(asset.path)
    ctx.set('ETag', file.etag)
    ctx.set('Cache-Control', 'public, max-age=86400')
    ctx.set('X-Content-Type-Options', 'nosniff')
    // Not ctx.fresh: it ignores If-None-Match under Cache-Control: no-cache, which fetch()
    // sends with every conditional request; an origin server answers the condition (RFC 9110 13.1.2).
    if (matches(ctx.get('If-None-Match'), file.etag)) {
      ctx.status = 304
      return
    }
    ctx.type = asset.type
    ctx.body = file.content
  })
}

function matches(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}
