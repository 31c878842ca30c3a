// The rules of one sign-in counter (of a user name, a client address or a whole tenant), apart
// from where counters are kept (sign-in-throttle.ts), so the database and memory apply the same.
//
// An attempt is reserved before its password is checked: it is pending, and no attempt is let
// through while failures and pending attempts together reach the limit. So however many
// attempts arrive at once, at most MaxFailures passwords are checked; the others wait (429).
// The outcome turns the reservation into a failure — the one reaching the limit locks the
// counter for the lockout, after which counting starts afresh — or releases it (a success).
//
// A reservation whose outcome never comes (the process died during the check) stays pending
// until the window is over: a window that ends forgets everything, pending attempts included.

export interface Counter {
  failures: number
  pending: number
  /** Epoch milliseconds; failures before windowStart + windowMs count. */
  windowStart: number
  /** Epoch milliseconds; 0 when not locked. */
  lockedUntil: number
}

export interface Limit {
  readonly maxFailures: number
  readonly lockoutMs: number
  readonly windowMs: number
}

export function freshCounter(now: number): Counter {
  return { failures: 0, pending: 0, windowStart: now, lockedUntil: 0 }
}

/** Seconds an attempt must wait before it may be tried, 0 when it may be tried now. */
export function waitSeconds(counter: Counter, limit: Limit, now: number): number {
  if (counter.lockedUntil > now) return Math.max(1, Math.ceil((counter.lockedUntil - now) / 1000))
  if (windowOver(counter, limit, now)) return 0
  // Pending attempts take the rest of the allowance; each ends within one password check.
  return counter.failures + counter.pending >= limit.maxFailures ? 1 : 0
}

/** Counts an attempt as pending; only after waitSeconds said 0. */
export function reserve(counter: Counter, limit: Limit, now: number): void {
  if (windowOver(counter, limit, now)) Object.assign(counter, freshCounter(now))
  counter.pending++
}

export function recordFailure(counter: Counter, limit: Limit, now: number): void {
  counter.pending = Math.max(0, counter.pending - 1)
  counter.failures++
  if (counter.failures >= limit.maxFailures) {
    counter.lockedUntil = now + limit.lockoutMs
    counter.failures = 0
    counter.windowStart = now
  }
}

/** `forgive`: the user's own counter, whose earlier failures a right password cancels. */
export function recordSuccess(counter: Counter, forgive: boolean): void {
  counter.pending = Math.max(0, counter.pending - 1)
  if (forgive) {
    counter.failures = 0
    counter.lockedUntil = 0
  }
}

function windowOver(counter: Counter, limit: Limit, now: number): boolean {
  return counter.lockedUntil <= now && counter.windowStart + limit.windowMs <= now
}
