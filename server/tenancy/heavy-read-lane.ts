// Fairness inside one tenant's pool. A heavy read (a collection read that filters, expands,
// counts, aggregates, sorts or skips: its cost grows with the data) may hold at most `slots`
// connections at once, one fewer than the pool, so the tenant's cheap work (key reads, writes,
// sign-ins) always finds a connection however many heavy reads arrive. Heavy reads beyond the
// slots wait here, first come first served, for at most the acquisition timeout; they never
// queue in the pool ahead of cheap work.

import { RequestError } from '../errors.ts'

export class HeavyReadLane {
  readonly slots: number
  #running = 0
  readonly #waiting: (() => void)[] = []

  constructor(slots: number) {
    this.slots = Math.max(1, slots)
  }

  /** Heavy reads waiting for a slot now (for the metrics' pool_waiting). */
  get waiting(): number {
    return this.#waiting.length
  }

  /**
   * Takes a slot, waiting for one at most `timeoutMs` (0: without limit); resolves with the
   * function that gives it back (once; further calls do nothing). Rejects with 503 on
   * timeout, or with the signal's reason when the request is abandoned while waiting.
   */
  enter(timeoutMs: number, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    if (this.#running < this.slots) {
      this.#running++
      return Promise.resolve(this.#leave())
    }
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', abandon)
        const at = this.#waiting.indexOf(grant)
        if (at >= 0) this.#waiting.splice(at, 1)
      }
      const grant = () => {
        settle()
        this.#running++
        resolve(this.#leave())
      }
      const abandon = () => {
        settle()
        reject(signal!.reason)
      }
      const timer = timeoutMs > 0 ? setTimeout(() => {
        settle()
        reject(RequestError.noConnection(timeoutMs / 1000))
      }, timeoutMs) : undefined
      signal?.addEventListener('abort', abandon, { once: true })
      this.#waiting.push(grant)
    })
  }

  #leave(): () => void {
    let left = false
    return () => {
      if (left) return
      left = true
      this.#running--
      this.#waiting[0]?.()
    }
  }
}
