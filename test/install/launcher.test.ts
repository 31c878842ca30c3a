// bin/entityctl: picks <project>/.runtime/node, else a new enough `node` on PATH, else tells
// the user to run ./install.sh; works through symlinks; passes the arguments through.
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

const repo = resolve(import.meta.dirname, '../..')
let root: string

/** A fake node: answers --version with `version`, else runs the real node with VIA=<label>. */
function fakeNode(dir: string, version: string, label: string): void {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'node')
  writeFileSync(
    path,
    `#!/bin/sh\nif [ "$1" = --version ]; then echo ${version}; exit 0; fi\n` +
      `printf '%s\\n' "$@" > "$(dirname "$0")/args.txt"\nVIA=${label} exec "${process.execPath}" "$@"\n`,
  )
  chmodSync(path, 0o755)
}

/** A project folder with the launcher and a cli/main.ts that reports how it was run. */
function project(name: string): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'bin'), { recursive: true })
  mkdirSync(join(dir, 'cli'))
  mkdirSync(join(dir, 'node_modules'))
  copyFileSync(join(repo, 'bin/entityctl'), join(dir, 'bin/entityctl'))
  chmodSync(join(dir, 'bin/entityctl'), 0o755)
  writeFileSync(join(dir, 'cli/main.ts'), 'const args: string[] = process.argv.slice(2)\nconsole.log(JSON.stringify({ via: process.env.VIA, args }))\n')
  return dir
}

function run(command: string, args: string[], path: string) {
  const result = spawnSync(command, args, { encoding: 'utf8', env: { PATH: path, HOME: root, NODE_COMPILE_CACHE: '' } })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'entityctl-launcher-'))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('bin/entityctl', () => {
  test('prefers .runtime/node and passes the arguments through', () => {
    const dir = project('runtime')
    fakeNode(join(dir, '.runtime/node/bin'), 'v24.21.0', 'runtime')
    fakeNode(join(root, 'system24'), 'v24.0.0', 'system')
    const result = run(join(dir, 'bin/entityctl'), ['tenant', 'add', 'a b'], `${join(root, 'system24')}:/usr/bin:/bin`)
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({ via: 'runtime', args: ['tenant', 'add', 'a b'] })
  })

  test('uses the system node when it is new enough, and when the runtime one is too old', () => {
    const dir = project('system')
    fakeNode(join(root, 'system2218'), 'v22.18.0', 'system')
    let result = run(join(dir, 'bin/entityctl'), ['--version'], `${join(root, 'system2218')}:/usr/bin:/bin`)
    expect(JSON.parse(result.stdout)).toEqual({ via: 'system', args: ['--version'] })

    fakeNode(join(dir, '.runtime/node/bin'), 'v20.0.0', 'old-runtime')
    result = run(join(dir, 'bin/entityctl'), [], `${join(root, 'system2218')}:/usr/bin:/bin`)
    expect(JSON.parse(result.stdout).via).toBe('system')
  })

  test('node 22.17 gets type stripping switched on', () => {
    const dir = project('n2217')
    fakeNode(join(root, 'system2217'), 'v22.17.0', 'system')
    const result = run(join(dir, 'bin/entityctl'), ['x'], `${join(root, 'system2217')}:/usr/bin:/bin`)
    expect(JSON.parse(result.stdout).via).toBe('system')
    const flags = spawnSync('cat', [join(root, 'system2217/args.txt')], { encoding: 'utf8' }).stdout.split('\n')
    expect(flags.slice(0, 3)).toEqual(['--experimental-strip-types', '--disable-warning=ExperimentalWarning', join(dir, 'cli/main.ts')])
  })

  test('without a new enough node it says to run ./install.sh', () => {
    const dir = project('none')
    fakeNode(join(root, 'system20'), 'v20.20.2', 'system')
    const result = run(join(dir, 'bin/entityctl'), ['serve'], `${join(root, 'system20')}:/usr/bin:/bin`)
    expect(result.status).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('needs Node.js >= 22.17 (found: v20.20.2)')
    expect(result.stderr).toContain(`Run ${dir}/install.sh first`)
  })

  test('without node_modules it says to run ./install.sh', () => {
    const dir = project('no-modules')
    fakeNode(join(dir, '.runtime/node/bin'), 'v24.21.0', 'runtime')
    rmSync(join(dir, 'node_modules'), { recursive: true })
    const result = run(join(dir, 'bin/entityctl'), [], '/usr/bin:/bin')
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('install.sh first')
  })

  test('works through a chain of symlinks, relative and absolute', () => {
    const dir = project('linked')
    fakeNode(join(dir, '.runtime/node/bin'), 'v24.21.0', 'runtime')
    const links = join(root, 'links')
    mkdirSync(join(links, 'usr/local/bin'), { recursive: true })
    symlinkSync(join(dir, 'bin/entityctl'), join(links, 'absolute'))
    symlinkSync('../../../absolute', join(links, 'usr/local/bin/entityctl'))
    const direct = run(join(links, 'usr/local/bin/entityctl'), ['ok'], '/usr/bin:/bin')
    expect(JSON.parse(direct.stdout)).toEqual({ via: 'runtime', args: ['ok'] })
    // Found on PATH, as after `ln -s …/bin/entityctl /usr/local/bin/`.
    const onPath = run('entityctl', ['ok'], `${join(links, 'usr/local/bin')}:/usr/bin:/bin`)
    expect(JSON.parse(onPath.stdout)).toEqual({ via: 'runtime', args: ['ok'] })
  })
})
