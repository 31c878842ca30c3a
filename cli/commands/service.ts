import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

export function serviceCommand(): Command {
  const install = withJson(
    new Command('install')
      .description('Write a systemd unit that runs `entityctl serve` with this config: restarted on failure, secrets from an environment file, the log (JSON lines) in the journal. It does not enable the unit: the command prints how.')
      .option('--user <name>', 'the user the service runs as (default: the owner of the project folder)')
      .option('--name <name>', 'the unit name', 'entityctl')
      .option('--unit-dir <dir>', 'where the unit is written (default: $ENTITYCTL_UNIT_DIR, else /etc/systemd/system)')
      .option('--environment-file <path>', 'the environment file for secrets, e.g. JWT__SigningKey=… (created, mode 600, when missing)', '/etc/entityctl/entityctl.env')
      .option('--force', 'replace a unit file of that name'),
  ).action(lazy(() => import('../actions/service.ts'), 'installService'))
  const uninstall = withJson(
    new Command('uninstall')
      .description('Remove the unit file written by `service install` (stop and disable it first: the command prints how). The environment file stays.')
      .option('--name <name>', 'the unit name', 'entityctl')
      .option('--unit-dir <dir>', 'where the unit is (default: $ENTITYCTL_UNIT_DIR, else /etc/systemd/system)'),
  ).action(lazy(() => import('../actions/service.ts'), 'uninstallService'))
  return new Command('service').description('Run entityctl as a systemd service.').addCommand(install).addCommand(uninstall)
}
