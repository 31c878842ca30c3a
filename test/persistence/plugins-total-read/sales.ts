// The demo plugin with a rule that reads the order's Total: a line may not take its order
// past 1,000. The write then sets the total it worked out over the version it read, where the
// demo adds the line's change in SQL (rules/moved-sums.ts), so the rule saw what is stored.
import { plugin, type EntityDecl } from 'entityctl/plugin'
import demo from '../../fixtures/demo-plugins/sales.ts'

const CEILING = 1000

const withCeiling = (entity: EntityDecl): EntityDecl =>
  entity.name !== 'OrderLine'
    ? entity
    : {
        ...entity,
        validations: {
          ...entity.validations,
          Quantity: (line) => (line.Order?.Total ?? 0) <= CEILING || `The order may total at most ${CEILING}`,
        },
      }

export default plugin({ ...demo, entities: demo.entities.map(withCeiling) })
