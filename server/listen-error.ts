// What a listener that could not open says: the setting to change, in words. The API's listener
// and the metrics listener (Server:MetricsPort) answer alike.

/** The settings that choose a listener's port and address, named in its errors. */
export interface ListenerSettings {
  readonly port: string
  readonly host: string
}

export const API_LISTENER: ListenerSettings = { port: '--port', host: 'Server:Host (or --host)' }
export const METRICS_LISTENER: ListenerSettings = { port: 'Server:MetricsPort', host: 'Server:MetricsHost' }

/**
 * Why a listener could not open, naming the setting to change. The bare `getaddrinfo ENOTFOUND`
 * of a mistyped host would otherwise read as a database that cannot be reached (cli/database-hint.ts).
 */
export function listenError(error: NodeJS.ErrnoException, port: number, host: string, settings: ListenerSettings): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new Error(`Port ${port} on ${host} is already in use; choose another with ${settings.port}.`)
    case 'EACCES':
      return new Error(`Port ${port} on ${host} needs privileges this user does not have; choose a port above 1023 with ${settings.port}.`)
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EADDRNOTAVAIL':
      return new Error(`Cannot listen on ${host}: it is not an address of this machine (${error.code}); check ${settings.host}.`)
    default:
      return error
  }
}
