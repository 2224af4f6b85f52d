import { Option, type Command } from 'commander';
import { buildEmulator, DEFAULT_ORG_ID, loadCatalog } from 'geohook/emulator';
import { loadEmulatorConfig } from '../config/load-config.js';
import { listenFailure } from '../errors.js';
import { closeOnSignal } from './close-on-signal.js';

interface EmulatorFlags {
  port: string;
  host: string;
  catalog?: string;
  publicUrl?: string;
  orgId: string;
  logLevel: string;
  allowedHost: string[];
}

/** Collects the names of `--allowed-host`, given once per name or as a comma list. */
function hostNames(value: string, previous: string[]): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  ];
}

async function runEmulator(flags: EmulatorFlags): Promise<void> {
  const { port, users, tokenSeconds } = loadEmulatorConfig(process.env, { EMULATOR_PORT: flags.port });
  const app = await buildEmulator({
    // --port 0: the URLs in payloads use the port the emulator got, known once it listens.
    ...(flags.publicUrl !== undefined ? { publicUrl: flags.publicUrl } : port === 0 ? {} : { publicUrl: `http://${flags.host}:${port}` }),
    logLevel: flags.logLevel,
    orgId: flags.orgId,
    // The name it was told to listen on is one clients use to reach it.
    allowedHosts: [flags.host, ...flags.allowedHost],
    ...(flags.catalog === undefined ? {} : { catalog: loadCatalog(flags.catalog) }),
    ...(users === undefined ? {} : { users }),
    ...(tokenSeconds === undefined ? {} : { tokenSeconds }),
  });
  await app.listen({ host: flags.host, port }).catch(async (err: unknown) => {
    await app.close();
    throw listenFailure(err, 'the emulator', `${flags.host}:${port}`, '--port (or EMULATOR_PORT)');
  });
  closeOnSignal(app.log, () => app.close());
}

/** `geohook emulator`: the admin-API emulator alone (docs/emulator.md). */
export function registerEmulator(command: Command): void {
  command
    .addOption(new Option('--port <port>', 'port').env('EMULATOR_PORT').default('7080'))
    .addOption(new Option('--host <host>', 'listen address').default('127.0.0.1'))
    .addOption(new Option('--catalog <file>', 'JSON array of services replacing the default catalogue'))
    .addOption(
      new Option('--public-url <url>', 'base URL the emulator is reached at (default http://HOST:PORT, the port it got with --port 0)'),
    )
    .addOption(
      new Option('--allowed-host <name>', 'a further host name requests may be addressed to (repeatable, or a comma list)')
        .argParser(hostNames)
        .default([]),
    )
    .addOption(new Option('--org-id <id>', 'id of the ArcGIS Online organization it serves at /<id>/ArcGIS/rest').default(DEFAULT_ORG_ID))
    .addOption(new Option('--log-level <level>', 'pino level').env('LOG_LEVEL').default('info'))
    .addHelpText('after', '\nUsers come from EMULATOR_USERS=user:password:role,… (roles administrator, orgadmin, none).')
    .action((flags: EmulatorFlags) => runEmulator(flags));
}
