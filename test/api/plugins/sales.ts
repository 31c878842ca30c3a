// The demo plugin, next to tally.ts, for the write tests that also call methods with entity results.
export { default } from '../../fixtures/demo-plugins/sales.ts'
