// How long `bin/entityctl --help` takes: the start-up cost of every CLI command (node, the
// launcher, commander and the command tree; the server is not loaded). Runs it N times
// (default 15) one after another and prints the median, the fastest and the slowest, with the
// machine's load so that a figure taken on a busy machine says so.
//
//   npm run bench:cli                  # 15 runs
//   npm run bench:cli -- --runs 31 -- tenant --help    # another command line

import { spawnSync } from 'node:child_process'
import { loadavg, cpus } from 'node:os'
import { fileURLToPath } from 'node:url'

const bin = process.env.ENTITYCTL_BIN ?? fileURLToPath(new URL('../../bin/entityctl', import.meta.url))
const argv = process.argv.slice(2)
const runsAt = argv.indexOf('--runs')
const runs = runsAt === -1 ? 15 : Number(argv[runsAt + 1])
const rest = argv.indexOf('--')
const args = rest === -1 ? ['--help'] : argv.slice(rest + 1)
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive whole number, not '${argv[runsAt + 1]}'`)

const load = loadavg()[0]
// One run first, not counted: it fills V8's compile cache (NODE_COMPILE_CACHE) as any first use does.
spawnSync(bin, args, { stdio: 'ignore' })
const times: number[] = []
for (let i = 0; i < runs; i++) {
  const start = process.hrtime.bigint()
  const result = spawnSync(bin, args, { stdio: 'ignore' })
  times.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (result.status !== 0) throw new Error(`entityctl ${args.join(' ')} exited ${result.status}`)
}
times.sort((a, b) => a - b)
const median = times[Math.floor(times.length / 2)]
const ms = (value: number) => `${value.toFixed(0)} ms`
console.log(`entityctl ${args.join(' ')}: median ${ms(median)} over ${runs} runs (fastest ${ms(times[0])}, slowest ${ms(times.at(-1)!)})`)
console.log(`load average (1 min) ${load.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after, on ${cpus().length} CPUs`)
