// The settings a running server does not follow. It follows its config file for the tenants
// only (config-watch.ts); every other key is read once, at start. An edit to one is said in
// the log (start.ts) instead of silently waiting for a restart.

import type { Config } from './load-config.ts'
import { SECTIONS } from './schema.ts'

/** `Section:Key` of each key whose value in `next` is not the one the server started with. */
export function keysChangedSinceStart(running: Config, next: Config): string[] {
  const changed: string[] = []
  for (const [section, keys] of Object.entries(SECTIONS) as [keyof typeof SECTIONS, object][]) {
    const [was, now] = [running[section] as Record<string, unknown>, next[section] as Record<string, unknown>]
    for (const key of Object.keys(keys)) if (was[key] !== now[key]) changed.push(`${section}:${key}`)
  }
  return changed
}
