// Which plan a read statement runs with: the shape's generic plan, or one made for its values.
//
// Tenant connections plan each prepared statement once (plan_cache_mode = force_generic_plan,
// tenancy/tenant-database.ts): planning the unit of work's statements cost more than running
// them. A generic plan cannot look into its parameters, so where a read's cost grows with the
// data it may be planned for an average value that is wrong for the one sent. In the benchmark
// at ten times the data, Q3's `Customer/Country eq 'DE'` is estimated as one country in twenty
// (5,000 customers, where 'DE' has 15,752), and its count then reads the customers by a bitmap
// heap scan: in one measurement 82-91 ms against 50-65 ms for a plan made for 'DE', in another
// (a quieter machine) 27 ms against 20 (README, Performance). Whether a plan made for the values
// wins, and by how much, cannot be known from a time alone, so it is measured: each tenant
// keeps, per shape of heavy read (persistence/session.ts), the times of its last RUNS runs with
// each kind of plan. A shape whose last generic runs all took longer than
// `Database:PlanForValuesAfterMs` (10 ms: planning one is about a millisecond) is tried with
// plans made for its values for RUNS runs; they are kept if the quickest of them beat the
// quickest generic run by CUSTOM_MUST_WIN_BY, and the shape goes back to its generic plan
// otherwise. Either choice is measured again after RETRY_RUNS runs: the data, and with it the
// better plan, changes. (A plan made for the values is not dropped for being quick: a shape
// whose generic plan takes 12 ms and its plan for the values 3 ms would then take the slow
// one three runs in four.) The quickest of a few runs, not their average: a first run on a
// cold connection is slow for reasons no plan changes. A plan made for the values
// holds for that one statement (a read-only transaction with a SET LOCAL: two round trips
// more), so nothing else runs with it. Without it (PlanForValuesAfterMs 0) every statement
// keeps its generic plan and nothing is timed.
//
// The time is the statement's, from when it has its connection, divided by the statements of
// its tenant running beside it (persistence/request-connection.ts): under load every statement
// takes longer. Timed as it was, the benchmark's Q3 at scale 1 (4 ms alone, 40-70 ms among 16
// clients) passed for a slow shape, took a custom plan at every run, and fell from 0.90 of
// the floor's throughput to 0.50; counting only runs made alone, a tenant that is never idle
// never learned (the benchmark's Q3 at scale 10 kept its generic plan under load).

/** How many of a shape's latest runs with one kind of plan decide. */
export const RUNS = 3
/** Runs after a choice before it is measured again. */
export const RETRY_RUNS = 500
/**
 * A plan made for the values is kept only if its quickest run beat the generic plan's by this
 * share: its two extra round trips are not in its time.
 */
export const CUSTOM_MUST_WIN_BY = 0.05
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
  /** The latest runs' times in ms with the generic plan, oldest first, at most RUNS. */
  readonly genericRuns: number[]
  /** The same with plans made for the values, since the shape last took them. */
  readonly customRuns: number[]
  /** Whether the shape's next run is planned for its values. */
  custom: boolean
  /** Whether plans made for the values are on trial: kept or dropped once RUNS of them ran. */
  trial: boolean
  /** Runs to go before the choice is measured again. */
  untilRetry: number
}

/** One tenant's record of its read shapes' durations, and the plan each gets. */
export class PlanChoice {
  readonly #shapes = new Map<string, ShapeTimes>()
  /** Generic runs all longer than this are worth trying a plan made for the values; 0: never. */
  readonly afterMs: number

  constructor(afterMs: number) {
    this.afterMs = afterMs
  }

  /** Whether shapes are timed and chosen for at all. */
  get on(): boolean {
    return this.afterMs > 0
  }

  /** Whether the shape (its statement name) runs with a plan made for its values. */
  custom(shape: string): boolean {
    return this.#shapes.get(shape)?.custom ?? false
  }

  /**
   * Records how long a run of the shape took, from its start to its last row, as if alone, and
   * with which kind of plan it ran (`forValues`), then chooses the plan of its next run.
   */
  ran(shape: string, ms: number, forValues: boolean): void {
    if (!this.on) return
    const times = this.#timesOf(shape)
    keepLatest(forValues ? times.customRuns : times.genericRuns, ms)
    if (times.untilRetry > 0) times.untilRetry--
    if (!times.custom) {
      if (times.untilRetry === 0 && times.genericRuns.length === RUNS && quickest(times.genericRuns) > this.afterMs) this.#tryCustom(times)
      return
    }
    if (times.trial && times.customRuns.length === RUNS) {
      const won = quickest(times.customRuns) <= quickest(times.genericRuns) * (1 - CUSTOM_MUST_WIN_BY)
      if (!won) return this.#useGeneric(times, RETRY_RUNS)
      times.trial = false
      times.untilRetry = RETRY_RUNS
    } else if (!times.trial && times.untilRetry === 0) {
      // Measure the generic plan again: it may win now; if it is still slow, the trial follows.
      times.genericRuns.length = 0
      this.#useGeneric(times, 0)
    }
  }

  #timesOf(shape: string): ShapeTimes {
    let times = this.#shapes.get(shape)
    if (!times) {
      if (this.#shapes.size >= MOST_SHAPES) this.#shapes.clear()
      times = { genericRuns: [], customRuns: [], custom: false, trial: false, untilRetry: 0 }
      this.#shapes.set(shape, times)
    }
    return times
  }

  #tryCustom(times: ShapeTimes): void {
    times.customRuns.length = 0
    times.custom = true
    times.trial = true
  }

  #useGeneric(times: ShapeTimes, untilRetry: number): void {
    times.custom = false
    times.trial = false
    times.untilRetry = untilRetry
  }
}

function keepLatest(runs: number[], ms: number): void {
  runs.push(ms)
  if (runs.length > RUNS) runs.shift()
}

function quickest(runs: readonly number[]): number {
  return Math.min(...runs)
}
