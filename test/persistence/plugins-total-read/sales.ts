// The demo plugin with a rule that reads the order's Total through its view: a line may not
// take its order past 1,000. The write then sets the order's total over the version it read,
// where the demo adds the line's change in SQL (rules/moved-sums.ts), so the rule saw what is stored.
import { CEILING, demoWithCeiling } from '../line-ceiling.ts'

export default demoWithCeiling((line) => (line.Order?.Total ?? 0) <= CEILING || `The order may total at most ${CEILING}`)
