import { defineConfig } from 'vitest/config'
import { SlowFilesFirst } from './test/support/slow-files-first.ts'

/**
 * Files that need a Node process of their own: they assert on what a process does once only
 * (pg's deprecation warnings are emitted once per process: a file before them in the same
 * worker could have used it up).
 */
const OWN_PROCESS = ['test/auth/access-listener.test.ts']

// Each test file creates its own databases, so files run in parallel; the machine has 2 cores.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    // The longest files start first, so that neither worker runs one alone at the end.
    sequence: { sequencer: SlowFilesFirst },
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        extends: true,
        // A worker runs one file after another instead of a new process per file: starting Node
        // and importing the server again for each file took nearly half of test/odata's time.
        // test/bench/.work/ holds the benchmark's output, not tests.
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ['test/bench/.work/**', ...OWN_PROCESS], isolate: false },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS, isolate: true } },
    ],
  },
})
