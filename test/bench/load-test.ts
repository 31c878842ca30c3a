// Load on one operation of one system with autocannon (WORKLOAD.md §5): a warm-up whose figures
// are discarded, then the measured run. Requests/s is autocannon's mean of per-second samples;
// p50 and p99 come from every response's own time (autocannon's histogram keeps whole
// milliseconds, too coarse for sub-millisecond answers), errors and non-2xx as it counts them.
import autocannon from 'autocannon'
import type { Request } from 'autocannon'

export type LoadSettings = { connections: number; warmupSeconds: number; durationSeconds: number }

/** What to send: a fixed request, or `next()` called for every request (writes need fresh bodies). */
export type LoadTarget = {
  method: string
  headers: Record<string, string>
  path?: string
  next?: () => { path: string; body?: string }
}

export type LoadResult = {
  requestsPerSecond: number
  requests: number
  p50Ms: number
  p99Ms: number
  errors: number
  timeouts: number
  non2xx: number
  statusCodes: Record<string, number>
}

export async function loadTest(origin: string, target: LoadTarget, settings: LoadSettings): Promise<LoadResult> {
  if (settings.warmupSeconds > 0) await run(origin, [target], settings.connections, settings.warmupSeconds, [])
  return measured(origin, [target], settings.connections, settings.durationSeconds)
}

/** Several requests in turn on every connection (the soak's mixed load), measured without warm-up. */
export function loadMix(origin: string, targets: LoadTarget[], connections: number, seconds: number): Promise<LoadResult> {
  return measured(origin, targets, connections, seconds)
}

async function measured(origin: string, targets: LoadTarget[], connections: number, seconds: number): Promise<LoadResult> {
  const times: number[] = []
  const result = await run(origin, targets, connections, seconds, times)
  times.sort((a, b) => a - b)
  return {
    requestsPerSecond: round(result.requests.mean, 1),
    requests: times.length,
    p50Ms: round(percentile(times, 0.5), 2),
    p99Ms: round(percentile(times, 0.99), 2),
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
  }
}

async function run(origin: string, targets: LoadTarget[], connections: number, seconds: number, times: number[]) {
  const requests = targets.map((target): Request => {
    const headers = { ...target.headers, ...(target.next && target.method !== 'GET' ? { 'content-type': 'application/json' } : {}) }
    const request: Request = { method: target.method, path: target.path, headers }
    if (target.next) {
      const next = target.next
      request.setupRequest = (current) => ({ ...current, ...next() })
    }
    return request
  })
  const instance = autocannon({ url: origin, connections, duration: seconds, requests })
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    times.push(responseTime)
  })
  return await instance
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}
