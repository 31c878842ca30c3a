// vitest's file order: the files known to take longest start first, the others in vitest's own
// order after them. Without its results cache (a CI clone) vitest starts the largest files
// first, and the benchmark's smoke test, a small file that runs for minutes, was 109th of 134:
// one worker ran it alone at the end, the other idle.
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Paths from the project root, longest first: each took a minute or more in a CI run. */
export const SLOWEST_FILES = [
  'test/bench/smoke.test.ts',
  'test/migrations/migrations.test.ts',
  'test/cli/tenant-data.test.ts',
  'test/cli/cli.test.ts',
]

export class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (file: TestSpecification) => {
      const index = SLOWEST_FILES.findIndex((path) => file.moduleId.endsWith(`/${path}`))
      return index === -1 ? SLOWEST_FILES.length : index
    }
    // Array.prototype.sort is stable: the others keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}
