// The demo plugin with one more rule: a line may not be written to an order past 1,000. The
// plugins of plugins-total-read/ and plugins-total-found/, which differ only in how the rule
// looks at the order's total (sums-read-by-rules.test.ts).
import { plugin, type EntityDecl } from 'entityctl/plugin'
import demo from '../fixtures/demo-plugins/sales.ts'

export const CEILING = 1000

type Validation = NonNullable<EntityDecl['validations']>[string]

/** The demo's plugin with `ceiling` as the validation of OrderLine.Quantity. */
export function demoWithCeiling(ceiling: Validation) {
  const withCeiling = (entity: EntityDecl): EntityDecl =>
    entity.name === 'OrderLine' ? { ...entity, validations: { ...entity.validations, Quantity: ceiling } } : entity
  return plugin({ ...demo, entities: demo.entities.map(withCeiling) })
}
