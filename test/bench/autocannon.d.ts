// The part of autocannon's API the runner uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  type Request = {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request | undefined
  }
  type Options = {
    url: string
    connections?: number
    duration?: number
    pipelining?: number
    timeout?: number
    requests?: Request[]
  }
  type Histogram = { mean: number; p50: number; p99: number; total?: number }
  type Result = {
    requests: Histogram & { total: number }
    latency: Histogram
    errors: number
    timeouts: number
    non2xx: number
    statusCodeStats: Record<string, { count: number }>
  }
  type Instance = EventEmitter & PromiseLike<Result> & { stop(): void }

  function autocannon(options: Options): Instance
  export default autocannon
  export type { Request, Result }
}
