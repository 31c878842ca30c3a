// A temporary folder where a generated client is made from a running server's $metadata and
// then run. The generated code is CommonJS and requires its runtime (@sap-cloud-sdk/odata-v4,
// @odata2ts/odata-service) by name: the folder declares itself CommonJS (the project's
// package.json says "module") and links the project's node_modules, so the client runs on the
// versions package.json pins.

import { execFile } from 'node:child_process'
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { TestServer } from '../support/test-server.ts'

const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url))

export interface ClientWorkspace {
  readonly dir: string
  /** Runs a generator's CLI (a JavaScript file) in the folder with the test's Node. */
  run(cli: string, args: readonly string[], options?: { preload?: string }): Promise<void>
  /** Loads a generated CommonJS module, relative to the folder. */
  load(path: string): any
  remove(): Promise<void>
}

/** Makes the folder and writes the server's `$metadata` (CSDL XML, as a client asks for it) to `metadata.xml`. */
export async function clientWorkspace(server: TestServer, token: string): Promise<ClientWorkspace> {
  const dir = await mkdtemp(join(tmpdir(), 'entityctl-client-'))
  await symlink(NODE_MODULES, join(dir, 'node_modules'), 'dir')
  await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'commonjs' }))
  const metadata = await fetch(`${server.api}/$metadata`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/xml' } })
  if (metadata.status !== 200) throw new Error(`$metadata: ${metadata.status} ${await metadata.text()}`)
  await writeFile(join(dir, 'metadata.xml'), await metadata.text())
  const require = createRequire(join(dir, 'package.json'))
  return {
    dir,
    async run(cli, args, options = {}) {
      const preload = options.preload ? ['-r', options.preload] : []
      // Generation takes 10–60 s on a busy machine; the hooks that call this allow 120 s.
      await promisify(execFile)(process.execPath, [...preload, cli, ...args], { cwd: dir, timeout: 110_000 })
    },
    load: (path) => require(join(dir, path)),
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}
