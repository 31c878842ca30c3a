import { defineConfig } from 'vitest/config'
import { SlowFilesFirst } from './test/support/slow-files-first.ts'

// Each test file creates its own databases, so files run in parallel; the machine has 2 cores.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/bench/ is the benchmark; its one test file runs it in --smoke mode.
    exclude: ['test/bench/.work/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    // The longest files start first, so that neither worker runs one alone at the end.
    sequence: { sequencer: SlowFilesFirst },
    globalSetup: ['test/support/global-setup.ts'],
  },
})
