// Hooks the rules engine into MikroORM's unit of work: every flush of every session runs
// the rules first, so no write path can skip them.

import type { EventSubscriber, FlushEventArgs } from '@mikro-orm/core'
import type { Model } from '../model/model.ts'
import { applyRules } from './apply-rules.ts'
import { unitNow } from '../persistence/unit-pins.ts'

export class RulesSubscriber implements EventSubscriber {
  readonly #model: Model
  constructor(model: Model) {
    this.#model = model
  }
  async beforeFlush({ em, uow }: FlushEventArgs): Promise<void> {
    await applyRules(em, this.#model, uow, unitNow(em))
  }
}
