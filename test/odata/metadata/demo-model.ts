// The demo plugin (the suite's copy of plugins/sales.ts) and the system entities, loaded once per test file.

import { fileURLToPath } from 'node:url'
import { loadModel } from '../../../server/model/load-plugins.ts'
import type { Model } from '../../../server/model/model.ts'

const PLUGINS = fileURLToPath(new URL('../../fixtures/demo-plugins', import.meta.url))

let demo: Promise<Model> | undefined

export function demoModel(): Promise<Model> {
  demo ??= loadModel(PLUGINS)
  return demo
}
