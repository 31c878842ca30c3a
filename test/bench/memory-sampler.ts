// A server's memory as the kernel sees it, sampled at a fixed interval from /proc/<pid>/status:
// VmRSS (resident set), split into RssAnon (heaps, V8's included) and RssFile (mapped code).
// Nothing is asked of the server itself, so the measurement costs it nothing and needs no
// debug endpoint.
import { readFileSync } from 'node:fs'

export type MemorySample = { atSeconds: number; rssMb: number; anonMb: number; fileMb: number }

export type MemorySampler = { latest(): MemorySample | undefined; stop(): MemorySample[] }

/** Samples now and every `intervalMs` until stopped; a sample that cannot be read is skipped. */
export function sampleMemory(pid: number, intervalMs: number): MemorySampler {
  const started = Date.now()
  const samples: MemorySample[] = []
  const take = () => {
    const sample = readMemory(pid, (Date.now() - started) / 1000)
    if (sample) samples.push(sample)
  }
  take()
  const timer = setInterval(take, intervalMs)
  return {
    latest: () => samples[samples.length - 1],
    stop() {
      clearInterval(timer)
      take()
      return samples
    },
  }
}

function readMemory(pid: number, atSeconds: number): MemorySample | undefined {
  let status: string
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return undefined
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  const mb = (value: number) => Math.round((value / 1024) * 10) / 10
  return { atSeconds: Math.round(atSeconds * 10) / 10, rssMb: mb(kb('VmRSS')), anonMb: mb(kb('RssAnon')), fileMb: mb(kb('RssFile')) }
}

export type MemoryVerdict = {
  /** The level the run is judged against: the sample at the end of the first minute. */
  referenceSeconds: number
  referenceMb: number
  maxLaterMb: number
  finalMb: number
  /** Growth of the highest later sample over the reference, in percent. */
  maxGrowthPercent: number
  finalGrowthPercent: number
  /**
   * Levels: the median RSS of the minute after the first (of the second fifth for runs under
   * five minutes) and of the last minute (fifth). Under requests that allocate megabytes each
   * (the soak's hostile share) single samples swing by a quarter; a leak moves the median.
   */
  referenceLevelMb: number
  finalLevelMb: number
  levelGrowthPercent: number
  limitPercent: number
  /** No later sample more than `limitPercent` above the reference (issue 8). */
  pass: boolean
  /** The last level no more than `limitPercent` above the reference level (issue #15). */
  levelPass: boolean
}

/**
 * Memory is flat when no sample after the first minute exceeds that minute's level by more than
 * `limitPercent` (issue 8); its level is flat when the median of the last minute is within
 * `limitPercent` of the median of the minute after the first (issue #15). Runs shorter than five
 * minutes take fifths instead of minutes.
 */
export function judgeMemory(samples: MemorySample[], runSeconds: number, limitPercent: number): MemoryVerdict {
  const referenceSeconds = Math.min(60, runSeconds / 5)
  const reference = samples.find((sample) => sample.atSeconds >= referenceSeconds) ?? samples[samples.length - 1]
  const later = samples.filter((sample) => sample.atSeconds > reference.atSeconds)
  const maxLaterMb = Math.max(reference.rssMb, ...later.map((sample) => sample.rssMb))
  const finalMb = samples[samples.length - 1].rssMb
  const growthOver = (base: number) => (mb: number) => Math.round(((mb - base) / base) * 1000) / 10
  const growth = growthOver(reference.rssMb)
  const window = referenceSeconds
  const inWindow = (from: number, to: number) => samples.filter((sample) => sample.atSeconds >= from && sample.atSeconds < to).map((sample) => sample.rssMb)
  const referenceLevelMb = median(inWindow(window, 2 * window)) ?? reference.rssMb
  const finalLevelMb = median(inWindow(Math.max(2 * window, runSeconds - window), Infinity)) ?? finalMb
  const levelGrowthPercent = growthOver(referenceLevelMb)(finalLevelMb)
  return {
    referenceSeconds: reference.atSeconds,
    referenceMb: reference.rssMb,
    maxLaterMb,
    finalMb,
    maxGrowthPercent: growth(maxLaterMb),
    finalGrowthPercent: growth(finalMb),
    referenceLevelMb,
    finalLevelMb,
    levelGrowthPercent,
    limitPercent,
    pass: growth(maxLaterMb) <= limitPercent,
    levelPass: levelGrowthPercent <= limitPercent,
  }
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : Math.round(((sorted[middle - 1] + sorted[middle]) / 2) * 10) / 10
}
