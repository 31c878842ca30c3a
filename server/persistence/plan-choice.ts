// Which plan a read statement runs with: the shape's generic plan, or one made for its values.
//
// Tenant connections plan each prepared statement once (plan_cache_mode = force_generic_plan,
// tenancy/tenant-database.ts): planning the unit of work's statements cost more than running
// them. A generic plan cannot look into its parameters, so where a read's cost grows with the
// data it may be planned for an average value that is wrong for the one sent. In the
// benchmark at ten times the data, Q3's `Customer/Country eq 'DE'` is estimated as one
// country in twenty (5,000 customers, where 'DE' has 15,752), and its count then reads the
// customers by a bitmap heap scan: 82-91 ms against 50-65 ms for a plan made for 'DE'
// (README, Performance). Planning for the values costs about a millisecond for such a
// statement, which only a statement running far longer repays. So each tenant keeps, per
// shape of heavy read (persistence/session.ts), how long its runs took; a shape whose recent
// runs take longer than CUSTOM_AFTER_MS is planned for its values from then on, and goes back
// to its generic plan when they fall under GENERIC_BELOW_MS. The connection is switched for
// that one statement (a SET before it, one after: two round trips on a statement of 20 ms or
// more) and switched back before it returns to the pool, so nothing else runs with the choice.
//
// The time is the statement's, from when it has its connection: a heavy read's wait for its
// lane and for the pool is not counted. A loaded PostgreSQL stretches every statement, so a
// shape may cross the threshold under load alone; one that does costs at least a few
// milliseconds when idle, where a millisecond of planning is a small part of its cost.

/** Runs longer than this (moving average) are worth a plan of their own: planning is then a few percent. */
export const CUSTOM_AFTER_MS = 20
/** Below this the generic plan is back: half the threshold, so a shape near it does not flip at every run. */
export const GENERIC_BELOW_MS = 10
/** The weight of the latest run in a shape's average. */
const WEIGHT = 0.25
/** Shapes remembered per tenant; past it the memory starts again (as statement names do, sql.ts). */
const MOST_SHAPES = 2000

export const CUSTOM_PLANS = 'set plan_cache_mode = force_custom_plan'
export const GENERIC_PLANS = 'set plan_cache_mode = force_generic_plan'

interface ShapeTimes {
  averageMs: number
  custom: boolean
}

/** One tenant's record of its read shapes' durations, and the plan each gets. */
export class PlanChoice {
  readonly #shapes = new Map<string, ShapeTimes>()

  /** Whether the shape (its statement name) runs with a plan made for its values. */
  custom(shape: string): boolean {
    return this.#shapes.get(shape)?.custom ?? false
  }

  /** Records how long a run of the shape took, from its start to its last row. */
  ran(shape: string, ms: number): void {
    const times = this.#shapes.get(shape)
    if (!times) {
      if (this.#shapes.size >= MOST_SHAPES) this.#shapes.clear()
      this.#shapes.set(shape, { averageMs: ms, custom: ms > CUSTOM_AFTER_MS })
      return
    }
    times.averageMs += WEIGHT * (ms - times.averageMs)
    if (!times.custom && times.averageMs > CUSTOM_AFTER_MS) times.custom = true
    else if (times.custom && times.averageMs < GENERIC_BELOW_MS) times.custom = false
  }
}
