// Reading a JSON request body (koa-body, configured in app.ts), at the right moment and with
// every failure a client can cause answered as a 4xx:
//
//   - when: sign-in and refresh are read at once (they have no credentials to check first);
//     any other request only once authenticate() has accepted its credentials (it calls
//     ctx.state.readBody), so an anonymous client cannot make the server inflate and parse a
//     body it will refuse anyway (a request outside /api, a 404, is never read);
//   - a body koa-body cannot read: a corrupt gzip/deflate/br stream is 400, an unknown
//     Content-Encoding 415 (size and syntax errors carry their own 4xx status, error-boundary.ts);
//   - strings PostgreSQL text cannot hold: a NUL character (\u0000, which JSON can escape) or a
//     lone UTF-16 surrogate (which would be stored as U+FFFD, silently changing the data) are
//     400 naming where they are, before anything reaches SQL;
//   - bytes that are no UTF-8 (a Latin-1 "ü", whatever the charset says: JSON is UTF-8, RFC 8259)
//     are 400, sent plain or compressed: the decoder would put U+FFFD in their place, silently
//     changing the data;
//   - a body nested deeper than MAX_BODY_DEPTH is 400: JSON.parse reads any depth without
//     recursion, but the stages after it (binding, rules, JSON.stringify) recurse, and a few
//     thousand levels in a 10 KB body would overflow their stack.
//
// A compressed body is inflated once, here, and koa-body reads the inflated stream: koa-body
// inflates and decodes as it reads, out of reach, so the bytes could otherwise only be checked by
// inflating the body a second time. It is handed a context whose `req` is the inflated stream,
// whose headers say it is plain (and give no Content-Length, which was the compressed one's);
// its limit (ApiOptions:MaxBodyBytes) counts inflated bytes as it did, so a zip bomb still stops
// there, and its errors (413, a corrupt stream) still reach its onError.

import { isUtf8 } from 'node:buffer'
import type { IncomingMessage } from 'node:http'
import type { Transform } from 'node:stream'
import { createBrotliDecompress, createUnzip } from 'node:zlib'
import type { Context, Middleware, Next } from 'koa'
import { RequestError, ServiceError } from '../errors.ts'
import type { ApiState } from './api-state.ts'

/** Paths (lower case, no trailing slash) whose body is read before authentication. */
const OPEN_PATHS = new Set(['/api/auth/signin', '/api/auth/refresh'])

/** The methods whose body is read (koa-body's parsedMethods, app.ts). */
export const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const

/** Wraps koa-body's middleware so that it runs at the moment described above. */
export function readJsonBody(parse: Middleware): Middleware<ApiState> {
  const read = async (ctx: Context) => {
    // Content codings are case-insensitive (RFC 9110 8.4.1); koa-body's inflation, for the JSON
    // types it reads beyond application/json, is not.
    const encoding = ctx.req.headers['content-encoding']
    if (encoding) ctx.req.headers['content-encoding'] = encoding.trim().toLowerCase()
    let chunks: Buffer[] | undefined
    try {
      const json = ctx.is('json') && (BODY_METHODS as readonly string[]).includes(ctx.method)
      const inflater = json ? inflating(ctx.req) : undefined
      // The body's content, inflated if it was compressed: what koa-body reads and what is checked to be UTF-8.
      chunks = json ? chunksOf(inflater ?? ctx.req) : undefined
      await parse(inflater ? readingFrom(ctx, inflater) : ctx, noop)
    } catch (error) {
      // A body refused before its end (413 by Content-Length, or past the limit) is left
      // half-read, paused: the connection could carry no next request. It closes after the answer.
      if (!ctx.req.complete) ctx.set('Connection', 'close')
      throw error
    }
    if (chunks && chunks.length > 0 && !isUtf8(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))) {
      throw RequestError.invalid('The request body is not UTF-8: JSON is sent as UTF-8 (RFC 8259), and bytes that are no UTF-8 would be stored as U+FFFD, changing the text.')
    }
    refuseUnusableBody(ctx.request.body)
  }
  return async (ctx, next: Next) => {
    if (isOpenPath(ctx.path)) {
      await read(ctx)
    } else {
      let reading: Promise<void> | undefined
      ctx.state.readBody = () => (reading ??= read(ctx))
    }
    await next()
  }
}

function isOpenPath(path: string): boolean {
  const lower = path.toLowerCase()
  return OPEN_PATHS.has(lower.endsWith('/') ? lower.slice(0, -1) : lower)
}

async function noop(): Promise<void> {}

/**
 * A stream inflating the request's body, as its Content-Encoding says (the codings koa-body's
 * `inflation` takes); none for a body sent plain.
 */
function inflating(req: IncomingMessage): Transform | undefined {
  const encoding = req.headers['content-encoding'] || 'identity'
  let inflater: Transform
  if (encoding === 'identity') return undefined
  if (encoding === 'gzip' || encoding === 'deflate') inflater = createUnzip()
  else if (encoding === 'br') inflater = createBrotliDecompress()
  else throw unsupportedEncoding(encoding)
  // koa-body's reader listens for a corrupt stream's error while it reads; one that comes after
  // it stopped (past the limit) must not be an uncaught 'error' event.
  inflater.on('error', noop)
  return req.pipe(inflater)
}

function unsupportedEncoding(encoding: string): ServiceError {
  return new ServiceError('UnsupportedMediaType', `Content-Encoding '${encoding}' is not supported; send the body plain, or as gzip, deflate or br.`)
}

/** `ctx` for koa-body, its request's body read from `content` (co-body reads `ctx.req`). */
function readingFrom(ctx: Context, content: Transform): Context {
  const headers = { ...ctx.req.headers, 'content-encoding': 'identity' }
  delete headers['content-length']
  return Object.create(ctx, { req: { value: Object.assign(content, { headers }) } }) as Context
}

/** The chunks `stream` gives its readers from now on; listening does not take them from koa-body. */
function chunksOf(stream: NodeJS.ReadableStream): Buffer[] {
  const chunks: Buffer[] = []
  stream.on('data', (chunk: Buffer) => chunks.push(chunk))
  return chunks
}

/** koa-body's `onError`: what it could not read, as the error the client gets. */
export function bodyReadError(error: Error & { status?: number; code?: string }, ctx: Context): Error {
  const encoding = ctx.get('Content-Encoding').trim()
  if (error.status === 415 && error.message.startsWith('Unsupported Content-Encoding')) return unsupportedEncoding(encoding)
  if (typeof error.status === 'number') return error // 413, a JSON syntax error, an aborted request: error-boundary.ts
  if (encoding && encoding.toLowerCase() !== 'identity') {
    return RequestError.invalid(`The request body is not valid ${encoding} data (Content-Encoding): ${error.message}.`)
  }
  return RequestError.invalid(`The request body could not be read: ${error.message}.`)
}

/** Arrays and objects inside each other: far beyond any entity body, far below the stack's reach. */
export const MAX_BODY_DEPTH = 100

/**
 * Walks the parsed body (keys and string values) without recursion, so a deeply nested body
 * cannot overflow the stack, and refuses it when it nests deeper than MAX_BODY_DEPTH or holds
 * a string PostgreSQL cannot store. The walk builds no paths (a megabyte body takes a few ms);
 * only a refused string is looked for again to name where it is.
 */
export function refuseUnusableBody(body: unknown): void {
  if (holdsUnstorableText(body)) refuseAtItsPath(body)
}

function holdsUnstorableText(body: unknown): boolean {
  const pending: unknown[] = [body]
  const depths: number[] = [0]
  while (pending.length > 0) {
    const value = pending.pop()
    const depth = depths.pop()!
    if (typeof value === 'string') {
      if (unstorable(value)) return true
      continue
    }
    if (value === null || typeof value !== 'object') continue
    if (depth === MAX_BODY_DEPTH) throw RequestError.invalid(`The request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels.`)
    if (Array.isArray(value)) {
      for (const item of value) {
        if (item !== null && (typeof item === 'object' || typeof item === 'string')) {
          pending.push(item)
          depths.push(depth + 1)
        }
      }
    } else {
      for (const key in value) {
        if (unstorable(key)) return true
        const item = (value as Record<string, unknown>)[key]
        if (item !== null && (typeof item === 'object' || typeof item === 'string')) {
          pending.push(item)
          depths.push(depth + 1)
        }
      }
    }
  }
  return false
}

function refuseAtItsPath(body: unknown): void {
  const pending: [unknown, string][] = [[body, '']]
  while (pending.length > 0) {
    const [value, path] = pending.pop()!
    if (typeof value === 'string') {
      refuseIfUnstorable(value, path)
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) pending.push([value[i], member(path, String(i))])
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        refuseIfUnstorable(key, member(path, key))
        pending.push([item, member(path, key)])
      }
    }
  }
}

/** `Lines/0/Name`: the targets the body reader's validation details use. */
function member(path: string, name: string): string {
  return path ? `${path}/${name}` : name
}

/** A NUL, or a UTF-16 surrogate without its pair (isWellFormed: ES2024, Node 20). */
function unstorable(text: string): 'nul' | 'surrogate' | undefined {
  if (text.includes('\u0000')) return 'nul'
  return text.isWellFormed() ? undefined : 'surrogate'
}

function refuseIfUnstorable(text: string, path: string): void {
  const problem = unstorable(text)
  if (!problem) return
  const target = path.length > 200 ? `${path.slice(0, 200)}…` : path
  const what = problem === 'nul' ? 'a NUL character (\\u0000)' : 'an unpaired UTF-16 surrogate (not a Unicode character)'
  throw RequestError.invalid(`The request body holds ${what}${target ? ` at ${target}` : ''}; text values cannot hold it.`, target || undefined)
}
