import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

export function doctorCommand(): Command {
  return withJson(
    new Command('doctor').description(
      'Check the installation and say what to do about each failure: the config, the Node.js version, the plugins, the ports, the database server, and per tenant its database, schema and key canary. Changes nothing. Exit 0: no check failed (warnings allowed); 1: a check failed; 2: no config file.',
    ),
  ).action(lazy(() => import('../actions/doctor.ts'), 'doctor'))
}
