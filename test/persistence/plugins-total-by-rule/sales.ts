// The demo plugin with the order's Total as a plain computed rule that reads every line,
// where the demo moves it (sumOf): a write that changes a line takes the order's lines along,
// so the tests of remembered member sets have sets to remember and check.
import { plugin, sum, type EntityDecl } from 'entityctl/plugin'
import demo from '../../fixtures/demo-plugins/sales.ts'

const totalByRule = (entity: EntityDecl): EntityDecl =>
  entity.name !== 'Order'
    ? entity
    : { ...entity, computed: { ...entity.computed, Total: { from: ['Lines.LineTotal'], value: (order) => sum(order.Lines, (line) => line.LineTotal) } } }

export default plugin({ ...demo, entities: demo.entities.map(totalByRule) })
