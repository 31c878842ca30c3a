// The node:http server under the Koa app: its limits, set from Server:* on purpose rather than
// left at Node's defaults, and an answer for every request Node refuses before Koa sees it.
//
//   HeadersTimeoutSeconds    the request head must be in by then          → 408, closed
//   RequestTimeoutSeconds    the whole request (head and body)            → 408, closed
//   KeepAliveTimeoutSeconds  an idle keep-alive connection is closed after this long
//   MaxHeaderBytes           request line and headers together            → 431, closed
//   MaxConnections           open connections, idle keep-alive ones too   → closed at accept
//   a malformed request (bad request line, header, chunk)                  → 400, closed
//   an HTTP/2 preface without TLS                                          → 400, closed
//   CONNECT (this is not a proxy)                                          → 501, closed
//
// Node checks the two timeouts every connectionsCheckingInterval, 30 s by default, so a slow
// head used to hold its connection 60 to 90 s; the interval here is a quarter of the shorter
// timeout. Every refusal is an OData error body, like Koa's answers, on a connection that is
// then closed gracefully: the answer is written, our side is shut, and what the client is still
// sending is read and dropped for a moment (LINGER_MS). Closing with unread bytes would make
// the kernel reset the connection, and the client would often see the reset, not the 431.

import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { Logger } from 'pino'
import type { Config } from '../config/load-config.ts'
import { ServiceError, type ErrorCode } from '../errors.ts'
import { errorBody } from './error-boundary.ts'
import { NO_METRICS, type EdgeRefusal, type Metrics } from '../metrics/metrics.ts'

/** How long a refused connection may go on sending before it is cut. */
const LINGER_MS = 2000
/** At most one warning about dropped connections per this many ms (a flood must not flood the log). */
const DROP_WARNING_MS = 10_000

/** `metrics` count what is refused here, before the app (and its request count) sees it. */
export function createHttpServer(handler: RequestListener, config: Config, logger: Logger, metrics: Metrics = NO_METRICS): Server {
  const { HeadersTimeoutSeconds, RequestTimeoutSeconds, KeepAliveTimeoutSeconds, MaxHeaderBytes, MaxConnections } = config.Server
  const headersTimeout = Math.round(HeadersTimeoutSeconds * 1000)
  const server = createServer(
    {
      headersTimeout,
      requestTimeout: Math.round(RequestTimeoutSeconds * 1000),
      keepAliveTimeout: Math.round(KeepAliveTimeoutSeconds * 1000),
      maxHeaderSize: MaxHeaderBytes,
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.round(headersTimeout / 4))),
    },
    handler,
  )
  server.maxConnections = MaxConnections
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => refuseMalformed(error, socket as Socket, logger, metrics))
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    metrics.refusedAtEdge('NotImplemented')
    answerAndClose(socket as Socket, 'NotImplemented', 'Not Implemented', 'CONNECT is not supported: this server is not a proxy.')
  })
  let dropped = 0
  let lastWarning = 0
  server.on('drop', () => {
    metrics.refusedAtEdge('MaxConnections')
    dropped++
    const now = Date.now()
    if (now - lastWarning < DROP_WARNING_MS) return
    logger.warn({ dropped, maxConnections: MaxConnections }, 'connections refused: Server:MaxConnections reached')
    lastWarning = now
    dropped = 0
  })
  return server
}

/** What Node's parser or its timeouts refused, answered as its status. */
function refuseMalformed(error: NodeJS.ErrnoException, socket: Socket, logger: Logger, metrics: Metrics): void {
  if (refused.has(socket)) return // the parser reports each further chunk of a refused connection again
  const code = error.code ?? ''
  if (code === 'ECONNRESET' || code === 'EPIPE') {
    // The client went away: nobody to answer, nothing worth a line at info.
    socket.destroy()
    return
  }
  logger.info({ code, reason: (error as { reason?: string }).reason ?? error.message }, 'request refused by the HTTP parser')
  const [answer, reason, message] = parserRefusal(code)
  metrics.refusedAtEdge(answer)
  answerAndClose(socket, answer, reason, message)
}

/** The answer to what Node's parser refused: code, reason phrase, message. */
function parserRefusal(code: string): [ErrorCode & EdgeRefusal, string, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['HeadersTooLarge', 'Request Header Fields Too Large', 'The request line and headers are larger than Server:MaxHeaderBytes.']
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['RequestTimeout', 'Request Timeout', 'The request was not received in time (Server:HeadersTimeoutSeconds, Server:RequestTimeoutSeconds).']
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return ['PayloadTooLarge', 'Payload Too Large', 'The chunk extensions of the request body are too large.']
    case 'HPE_PAUSED_H2_UPGRADE':
      return ['InvalidRequest', 'Bad Request', 'HTTP/2 is not supported without TLS; use HTTP/1.1.']
    default:
      return ['InvalidRequest', 'Bad Request', `The request is not valid HTTP/1.1 (${code || 'parse error'}).`]
  }
}

const refused = new WeakSet<Socket>()

/**
 * Writes an OData error answer straight to the socket and closes it gracefully. When a response
 * to this connection's request is already under way (a body that timed out), Node's own rule
 * applies: the error goes out only if nothing of that response has, and the socket is destroyed.
 */
function answerAndClose(socket: Socket, code: ErrorCode, reason: string, message: string): void {
  refused.add(socket)
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy()
    return
  }
  const error = new ServiceError(code, message)
  const body = JSON.stringify({ error: errorBody(error) })
  const head = [
    `HTTP/1.1 ${error.status} ${reason}`,
    'Content-Type: application/json; charset=utf-8',
    'OData-Version: 4.0',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ]
  const answer = `${head.join('\r\n')}\r\n\r\n${body}`
  // A client that resets the connection meanwhile is no error of ours (and a socket handed
  // over by the 'connect' event has no error listener left).
  socket.on('error', ignore)
  if (inFlight) {
    socket.write(answer)
    socket.destroy()
    return
  }
  socket.end(answer)
  // Read and drop whatever still comes (a socket the parser no longer consumes must be
  // resumed for that), until the client hangs up or LINGER_MS have passed.
  socket.on('data', ignore)
  socket.resume()
  const cut = setTimeout(() => socket.destroy(), LINGER_MS)
  cut.unref()
  socket.once('close', () => clearTimeout(cut))
}

function ignore(): void {}
