// The generated dataset in .work/data (scale 1: the shared gen-dataset.mjs itself) or
// .work/data-x<n> (scale n: scaled-dataset.mjs, the same generator with every size multiplied),
// generated once and reused while complete. Both write stats.json last, so its presence (with
// the expected row counts) means the CSV files and expected.json before it were written in full.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BENCH_DIR, WORK_DIR } from './options.ts'

const FILES = ['Product.csv', 'Customer.csv', 'Order.csv', 'OrderLine.csv', 'expected.json', 'stats.json']

export function datasetDir(scale: number): string {
  return join(WORK_DIR, scale === 1 ? 'data' : `data-x${scale}`)
}

export async function ensureDataset(workloadDir: string, dataDir: string, scale = 1): Promise<'reused' | 'generated'> {
  if (isComplete(dataDir, scale)) return 'reused'
  rmSync(dataDir, { recursive: true, force: true })
  const generator = join(workloadDir, 'gen-dataset.mjs')
  // Scale 10 holds about 5 million rows as objects while it computes the expected results.
  const args = scale === 1 ? [generator, dataDir] : ['--max-old-space-size=16000', join(BENCH_DIR, 'scaled-dataset.mjs'), generator, String(scale), dataDir]
  await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 20 })
  if (!isComplete(dataDir, scale)) throw new Error(`the generator did not produce a complete dataset in ${dataDir}`)
  return 'generated'
}

function isComplete(dataDir: string, scale: number): boolean {
  if (!FILES.every((file) => existsSync(join(dataDir, file)))) return false
  const stats = JSON.parse(readFileSync(join(dataDir, 'stats.json'), 'utf8')) as Record<string, number>
  const sized = stats.products === 2000 * scale && stats.customers === 10000 * scale && stats.orders === 100000 * scale
  return sized && (scale !== 1 || stats.lines === 400670)
}
