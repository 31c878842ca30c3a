// The demo plugin with a rule that finds orders by their Total: a line may not be written to
// an order past 1,000. It reads no Total through a view, but its filter does, so the write
// sets the order's total over the version read (rules/find.ts), as with plugins-total-read/.
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
          Quantity: async (line, { find }) =>
            (await find('Order', { Guid: line.Order?.Guid, Total: { $gt: CEILING } })).length === 0 || `The order may total at most ${CEILING}`,
        },
      }

export default plugin({ ...demo, entities: demo.entities.map(withCeiling) })
