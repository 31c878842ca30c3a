// What the server counts for Prometheus (README "Health and metrics"). With Server:MetricsPort
// 0 (the default) nothing is counted: the stages call NO_METRICS, whose methods do nothing.
//
// Requests are counted on their way out (http/request-log.ts). The counter is a tally of plain
// numbers in maps, read into prom-client only when scraped: prom-client's own inc hashes its
// labels into a string on every call, and reads are benchmarked against a floor. The latency
// histogram uses one prom-client child per route kind, made once. Pool counts are read from
// the open tenants' pools at scrape time; event-loop lag and the process's own figures are
// prom-client's default metrics.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { ThrottleLimit } from '../errors.ts'
import type { TenantRegistry } from '../tenancy/tenant-registry.ts'
import { routeKind, type RouteKind } from './route-kind.ts'

export type WorkflowEvent = 'created' | 'committed' | 'aborted' | 'expired'
export type EdgeRefusal = 'HeadersTooLarge' | 'RequestTimeout' | 'PayloadTooLarge' | 'InvalidRequest' | 'NotImplemented' | 'MaxConnections'

export interface Metrics {
  /** A request answered: `tenant` is the one its credentials or sign-in name, once served (undefined before). */
  requestEnded(method: string, path: string, status: number, tenant: string | undefined, seconds: number): void
  /** A request the HTTP edge refused before the app saw it (http/http-server.ts), by its answer's code; `MaxConnections`: a connection closed at once. */
  refusedAtEdge(code: EdgeRefusal): void
  /** A sign-in refused for wrong credentials; `tenant` only when the server knows it (no label per guessed name). */
  signInFailed(tenant: string | undefined): void
  /** A sign-in refused by the throttle (429), by the key of the limit that refused it. */
  signInThrottled(tenant: string | undefined, limit: ThrottleLimit): void
  workflows(event: WorkflowEvent, count?: number): void
}

export const NO_METRICS: Metrics = {
  requestEnded() {},
  refusedAtEdge() {},
  signInFailed() {},
  signInThrottled() {},
  workflows() {},
}

/** Seconds; from a key lookup (about a millisecond) to a heavy read near the query timeout. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry()
  /** kind → status → tenant ('' before authentication) → requests. */
  readonly #requests = new Map<RouteKind, Map<number, Map<string, number>>>()
  readonly #latency: Histogram<'kind'>
  readonly #latencyOf = new Map<RouteKind, { observe(seconds: number): void }>()
  readonly #refusedAtEdge: Counter<'code'>
  readonly #signInFailures: Counter<'tenant'>
  readonly #signInThrottled: Counter<'tenant' | 'limit'>
  readonly #workflows: Counter<'event'>

  constructor(tenants: TenantRegistry) {
    const registers = [this.registry]
    const requests = this.#requests
    new Counter({
      name: 'entityctl_http_requests_total',
      help: 'Requests answered, by route kind, status and the tenant their credentials or sign-in name.',
      labelNames: ['kind', 'status', 'tenant'] as const,
      registers,
      collect() {
        this.reset()
        for (const [kind, byStatus] of requests) {
          for (const [status, byTenant] of byStatus) {
            for (const [tenant, count] of byTenant) this.inc({ kind, status, tenant }, count)
          }
        }
      },
    })
    this.#latency = new Histogram({
      name: 'entityctl_http_request_duration_seconds',
      help: 'Time from a request\'s arrival to the end of its answer, by route kind.',
      labelNames: ['kind'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    })
    const poolGauge = (name: string, help: string, value: (use: ReturnType<TenantRegistry['poolUse']>[number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['tenant'] as const,
        registers,
        collect() {
          this.reset()
          for (const use of tenants.poolUse()) this.set({ tenant: use.tenant }, value(use))
        },
      })
    poolGauge('entityctl_pool_connections_in_use', 'Connections of an open tenant\'s pool checked out now.', (use) => use.inUse)
    poolGauge('entityctl_pool_connections_idle', 'Idle connections of an open tenant\'s pool.', (use) => use.idle)
    poolGauge('entityctl_pool_waiting', 'Requests waiting for a connection of an open tenant\'s pool.', (use) => use.waiting)
    const budgetGauge = (name: string, help: string, value: (connections: ReturnType<TenantRegistry['connections']>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value(tenants.connections()))
        },
      })
    budgetGauge('entityctl_database_connections', 'Connections of all tenant pools, open or opening (Database:MaxConnections bounds them).', (use) => use.used)
    budgetGauge('entityctl_database_connections_max', 'The most connections all tenant pools may have: Database:MaxConnections less one notification connection per database server.', (use) => use.bound)
    budgetGauge('entityctl_database_connections_waiting', 'New connections of tenant pools waiting for room under Database:MaxConnections.', (use) => use.waiting)
    this.#refusedAtEdge = new Counter({
      name: 'entityctl_http_refused_total',
      help: 'Requests refused by the HTTP edge before the app saw them (not in entityctl_http_requests_total), by the code answered; MaxConnections: connections closed at once.',
      labelNames: ['code'] as const,
      registers,
    })
    this.#signInFailures = new Counter({
      name: 'entityctl_signin_failures_total',
      help: 'Sign-ins refused for wrong credentials (tenant "" when the tenant is unknown).',
      labelNames: ['tenant'] as const,
      registers,
    })
    this.#signInThrottled = new Counter({
      name: 'entityctl_signin_throttled_total',
      help: 'Sign-ins refused by the throttle with 429 (tenant "" when the tenant is unknown), by the key of the limit that refused them.',
      labelNames: ['tenant', 'limit'] as const,
      registers,
    })
    this.#workflows = new Counter({
      name: 'entityctl_workflows_total',
      help: 'Workflows created, committed, aborted, and expired (discarded by the sweep: expired, or committed and past their retry window).',
      labelNames: ['event'] as const,
      registers,
    })
    new Gauge({
      name: 'entityctl_remembered_rows',
      help: 'Rows and member sets remembered for later writes, over all tenants (Database:RememberedRows bounds them).',
      registers,
      collect() {
        this.set(tenants.rememberedRows().held)
      },
    })
    new Counter({
      name: 'entityctl_remembered_lookups_total',
      help: 'Looks for a remembered row or member set by writes, by whether it was there.',
      labelNames: ['found'] as const,
      registers,
      collect() {
        const { found, missed } = tenants.rememberedRows()
        this.reset()
        this.inc({ found: 'true' }, found)
        this.inc({ found: 'false' }, missed)
      },
    })
    new Counter({
      name: 'entityctl_remembered_changed_total',
      help: 'Writes that found a row or member set they took from the remembered ones changed since, wrote nothing and ran again.',
      registers,
      collect() {
        this.reset()
        this.inc(tenants.rememberedRows().changed)
      },
    })
    // nodejs_eventloop_lag_seconds and its percentiles, heap, GC, handles, CPU.
    collectDefaultMetrics({ register: this.registry })
  }

  requestEnded(method: string, path: string, status: number, tenant: string | undefined, seconds: number): void {
    const kind = routeKind(method, path)
    let byStatus = this.#requests.get(kind)
    if (!byStatus) this.#requests.set(kind, (byStatus = new Map()))
    let byTenant = byStatus.get(status)
    if (!byTenant) byStatus.set(status, (byTenant = new Map()))
    const key = tenant ?? ''
    byTenant.set(key, (byTenant.get(key) ?? 0) + 1)
    let latency = this.#latencyOf.get(kind)
    if (!latency) this.#latencyOf.set(kind, (latency = this.#latency.labels(kind)))
    latency.observe(seconds)
  }

  refusedAtEdge(code: EdgeRefusal): void {
    this.#refusedAtEdge.inc({ code })
  }

  signInFailed(tenant: string | undefined): void {
    this.#signInFailures.inc({ tenant: tenant ?? '' })
  }

  signInThrottled(tenant: string | undefined, limit: ThrottleLimit): void {
    this.#signInThrottled.inc({ tenant: tenant ?? '', limit })
  }

  workflows(event: WorkflowEvent, count = 1): void {
    if (count > 0) this.#workflows.inc({ event }, count)
  }
}
