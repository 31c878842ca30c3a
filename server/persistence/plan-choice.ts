// Which plan a read statement runs with: the shape's generic plan, or one made for its values.
//
// Tenant connections plan each prepared statement once (plan_cache_mode = force_generic_plan,
// tenancy/tenant-database.ts): planning the unit of work's statements cost more than running
// them. A generic plan cannot look into its parameters, so where a read's cost grows with the
// data it may be planned for an average value that is wrong for the one sent. In the benchmark
// at ten times the data, Q3's `Customer/Country eq 'DE'` is estimated as one country in twenty
// (5,000 customers, where 'DE' has 15,752), and its count then reads the customers by a bitmap
// heap scan: 82-91 ms against 50-65 ms for a plan made for 'DE' (README, Performance). Planning
// for the values costs about a millisecond for such a statement, which only a statement running
// far longer repays. So each tenant keeps, per shape of heavy read (persistence/session.ts), the
// times of its last RUNS runs; a shape whose last runs all took longer than
// `Database:PlanForValuesAfterMs` (30 ms: planning is then a few percent) is planned for its
// values from then on, and goes back to its generic plan once one of them took less than half
// that (so a shape near it does not flip at every run). The quickest of a few runs, not their
// average: a first run on a cold connection is slow for reasons no plan changes. The choice
// holds for that one statement (a read-only transaction with a SET LOCAL: two round trips more,
// on a statement of 30 ms or more), so nothing else runs with it. Without it
// (PlanForValuesAfterMs 0) every statement keeps its generic plan and nothing is timed.
//
// The time is the statement's, from when it has its connection, divided by the statements of
// its tenant running beside it (persistence/request-connection.ts): under load every statement
// takes longer. Timed as it was, the benchmark's Q3 at scale 1 (4 ms alone, 40-70 ms among 16
// clients) passed for a slow shape, took a custom plan at every run, and fell from 0.90 of
// the floor's throughput to 0.50; counting only runs made alone, a tenant that is never idle
// never learned (the benchmark's Q3 at scale 10 kept its generic plan under load).

/** How many of a shape's latest runs decide. */
export const RUNS = 3
/** Shapes remembered per tenant; past it the memory starts again (as statement names do, sql.ts). */
const MOST_SHAPES = 2000

/**
 * Around a statement planned for its values: a read-only transaction whose setting ends with
 * it, so a connection never keeps it, whatever happens to the statement, and a pooler in
 * transaction mode keeps the three on one server connection.
 */
export const PLANNED_FOR_VALUES = 'begin read only; set local plan_cache_mode = force_custom_plan'
export const PLANNED_FOR_VALUES_END = 'rollback'

interface ShapeTimes {
  /** The latest runs' times in ms, oldest first, at most RUNS. */
  readonly runs: number[]
  custom: boolean
}

/** One tenant's record of its read shapes' durations, and the plan each gets. */
export class PlanChoice {
  readonly #shapes = new Map<string, ShapeTimes>()
  /** Runs all longer than this are worth a plan of their own; 0: never. */
  readonly afterMs: number
  /** One run quicker than this brings the generic plan back. */
  readonly genericBelowMs: number

  constructor(afterMs: number) {
    this.afterMs = afterMs
    this.genericBelowMs = afterMs / 2
  }

  /** Whether shapes are timed and chosen for at all. */
  get on(): boolean {
    return this.afterMs > 0
  }

  /** Whether the shape (its statement name) runs with a plan made for its values. */
  custom(shape: string): boolean {
    return this.#shapes.get(shape)?.custom ?? false
  }

  /** Records how long a run of the shape took, from its start to its last row, as if alone. */
  ran(shape: string, ms: number): void {
    if (!this.on) return
    let times = this.#shapes.get(shape)
    if (!times) {
      if (this.#shapes.size >= MOST_SHAPES) this.#shapes.clear()
      times = { runs: [], custom: false }
      this.#shapes.set(shape, times)
    }
    times.runs.push(ms)
    if (times.runs.length > RUNS) times.runs.shift()
    const quickest = Math.min(...times.runs)
    if (!times.custom && times.runs.length === RUNS && quickest > this.afterMs) times.custom = true
    else if (times.custom && quickest < this.genericBelowMs) times.custom = false
  }
}
