// The demo plugin with a rule that finds orders by their Total: a line may not be written to an
// order past 1,000. It reads no Total through a view, but its filter does, so the write sets the
// order's total over the version read (rules/find.ts), as with plugins-total-read/.
import { CEILING, demoWithCeiling } from '../line-ceiling.ts'

export default demoWithCeiling(
  async (line, { find }) => (await find('Order', { Guid: line.Order?.Guid, Total: { $gt: CEILING } })).length === 0 || `The order may total at most ${CEILING}`,
)
