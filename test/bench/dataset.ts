// The generated dataset in .work/data: generated once by the shared gen-dataset.mjs and reused
// while complete. The generator writes stats.json last, so its presence (with the promised row
// counts) means the CSV files and expected.json before it were written in full.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const FILES = ['Product.csv', 'Customer.csv', 'Order.csv', 'OrderLine.csv', 'expected.json', 'stats.json']

export async function ensureDataset(workloadDir: string, dataDir: string): Promise<'reused' | 'generated'> {
  if (isComplete(dataDir)) return 'reused'
  rmSync(dataDir, { recursive: true, force: true })
  await promisify(execFile)(process.execPath, [join(workloadDir, 'gen-dataset.mjs'), dataDir])
  if (!isComplete(dataDir)) throw new Error(`gen-dataset.mjs did not produce a complete dataset in ${dataDir}`)
  return 'generated'
}

function isComplete(dataDir: string): boolean {
  if (!FILES.every((file) => existsSync(join(dataDir, file)))) return false
  const stats = JSON.parse(readFileSync(join(dataDir, 'stats.json'), 'utf8')) as Record<string, number>
  return stats.products === 2000 && stats.customers === 10000 && stats.orders === 100000 && stats.lines === 400670
}
