// The settings a running server does not follow. It follows its config file for the tenants
// and the JWT signing keys (config-watch.ts, start.ts); every other key is read once, at
// start. An edit to one is said in the log (start.ts) instead of silently waiting for a restart.

import type { Config } from './load-config.ts'
import { SECTIONS } from './schema.ts'

/** Keys of a section that a running server follows (a rotation of the signing key must not wait for a restart). */
const FOLLOWED = new Set(['JWT:SigningKey', 'JWT:PreviousSigningKeys'])

/** `Section:Key` of each key whose value in `next` is not the one the server started with, and that waits for a restart. */
export function keysChangedSinceStart(running: Config, next: Config): string[] {
  const changed: string[] = []
  for (const [section, keys] of Object.entries(SECTIONS) as [keyof typeof SECTIONS, object][]) {
    const [was, now] = [running[section] as Record<string, unknown>, next[section] as Record<string, unknown>]
    for (const key of Object.keys(keys)) if (was[key] !== now[key] && !FOLLOWED.has(`${section}:${key}`)) changed.push(`${section}:${key}`)
  }
  return changed
}
