// The systems under test behind one shape, so the phases of the run treat the floor, an entityctl
// the runner starts and an entityctl already running alike.
import { join } from 'node:path'
import { databaseUrl } from './databases.ts'
import { ENTITYCTL_API_ROOT, signIn, startEntityctl } from './entityctl-process.ts'
import type { EntityctlSetup } from './entityctl-process.ts'
import { BENCH_DIR, WORK_DIR } from './options.ts'
import { freePort, startServer } from './server-process.ts'
import type { ServerProcess } from './server-process.ts'

/** `stack floor`: the floor's handlers served through Koa (floor-server.ts `--stack koa`). */
export type SystemName = 'floor' | 'stack floor' | 'entityctl'

/** Maps a PostgreSQL URL to the one a server must use (direct, or through the statement counter). */
export type Route = (connectionString: string) => string

export type System = {
  name: SystemName
  /** The service root path, e.g. `/api/`; workload paths are relative to it. */
  root: string
  origin: string
  /** Process id of the server, when the runner started it (memory is sampled from /proc). */
  pid?: number
  /** The database it serves, when known: cleaned, vacuumed and its statements counted. */
  database: string | undefined
  /** Whether statements are counted for it (an external server's connections cannot be routed). */
  routed: boolean
  headers: Record<string, string>
  start(route: Route): Promise<void>
  stop(): Promise<void>
  /** Refreshes the Authorization header, if the system has one. */
  authenticate(): Promise<void>
}

export function floorSystem(serverUrl: string, database: string, poolSize: number, stack: 'node:http' | 'koa' = 'node:http'): System {
  let server: ServerProcess | undefined
  const name = stack === 'koa' ? 'stack floor' : 'floor'
  const system: System = {
    name, root: '/api/', origin: '', database, routed: true, headers: {},
    async start(route) {
      const port = await freePort()
      server = await startServer({
        command: process.execPath,
        args: [join(BENCH_DIR, 'floor-server.ts'), '--port', String(port),
          '--database-url', databaseUrl(route(serverUrl), database), '--pool-size', String(poolSize), '--stack', stack],
        cwd: BENCH_DIR, port, logFile: join(WORK_DIR, `${name.replace(' ', '-')}.log`), readyPath: '/api/',
      })
      system.origin = server.origin
    },
    stop: async () => server?.stop(),
    authenticate: async () => {},
  }
  return system
}

export function managedEntityctl(setup: EntityctlSetup, database: string): System {
  let server: ServerProcess | undefined
  const system: System = {
    name: 'entityctl', root: ENTITYCTL_API_ROOT, origin: '', database, routed: true, headers: {},
    async start(route) {
      server = await startEntityctl(setup, route(setup.serverUrl), await freePort())
      system.origin = server.origin
      system.pid = server.pid
    },
    stop: async () => server?.stop(),
    async authenticate() {
      system.headers = { authorization: `Bearer ${await signIn(system.origin, setup)}` }
    },
  }
  return system
}

/** An entityctl someone else started: the runner neither starts nor stops it. */
export function externalEntityctl(setup: EntityctlSetup, url: string, database: string | undefined, routed: boolean): System {
  const origin = new URL(url).origin
  const system: System = {
    name: 'entityctl', root: ENTITYCTL_API_ROOT, origin, database, routed, headers: {},
    start: async () => {},
    stop: async () => {},
    async authenticate() {
      system.headers = { authorization: `Bearer ${await signIn(origin, setup)}` }
    },
  }
  return system
}
