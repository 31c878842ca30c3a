// The metrics listener (Server:MetricsHost, Server:MetricsPort): `GET /metrics` in Prometheus'
// text format, apart from the API so that it can stay on loopback or a private network while
// the API is public. It asks no credentials and answers nothing else.

import { createServer, type Server } from 'node:http'
import type { Logger } from 'pino'
import type { PrometheusMetrics } from './metrics.ts'
import { listenError, METRICS_LISTENER } from '../listen-error.ts'

export interface MetricsListener {
  readonly url: string
  close(): Promise<void>
}

export async function listenForScrapes(metrics: PrometheusMetrics, host: string, port: number, logger: Logger): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]
    if (path !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served here.\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'GET, HEAD' }).end('/metrics is read with GET.\n')
      return
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
      (error: Error) => {
        logger.error({ err: error.message }, 'metrics could not be collected')
        response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics could not be collected; see the server log.\n')
      },
    )
  })
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port, host, METRICS_LISTENER)))
    server.listen(port, host, () => resolve())
  })
  const address = server.address()
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${typeof address === 'object' && address ? address.port : port}/metrics`
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
