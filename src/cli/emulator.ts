import closeWithGrace from 'close-with-grace';
import { Option, type Command } from 'commander';

interface EmulatorFlags {
  port: string;
  host: string;
  catalog?: string;
  publicUrl?: string;
  logLevel: string;
}

/** `geohook emulator`: the admin-API emulator alone (CONTRACT §5). */
export function registerEmulator(program: Command): void {
  program
    .command('emulator')
    .description('serve the GIS admin API (webhooks, settings, placement, findServices, updateDefinition) with a real delivery engine')
    .addOption(new Option('--port <port>', 'port').env('EMULATOR_PORT').default('7080'))
    .addOption(new Option('--host <host>', 'listen address').default('127.0.0.1'))
    .addOption(new Option('--catalog <file>', 'JSON array of services replacing the default catalogue'))
    .addOption(new Option('--public-url <url>', 'base URL the emulator is reached at (default http://HOST:PORT, the port it got with --port 0)'))
    .addOption(new Option('--log-level <level>', 'pino level').env('LOG_LEVEL').default('info'))
    .addHelpText('after', '\nUsers come from EMULATOR_USERS=user:password:role,… (roles administrator, orgadmin, none).')
    .action(async (flags: EmulatorFlags) => {
      const [{ buildEmulator }, { loadCatalog }, { parseUsers }, { ConfigError }] = await Promise.all([
        import('../emulator/build-emulator.js'),
        import('../emulator/catalog.js'),
        import('../emulator/auth.js'),
        import('../errors.js'),
      ]);
      const port = Number(flags.port);
      if (!/^\d+$/.test(flags.port) || port > 65535) throw new ConfigError('EMULATOR_PORT: a port number from 0 to 65535');
      const app = await buildEmulator({
        // --port 0: the URLs in payloads use the port the emulator got, known once it listens.
        ...(flags.publicUrl !== undefined ? { publicUrl: flags.publicUrl } : port === 0 ? {} : { publicUrl: `http://${flags.host}:${port}` }),
        logLevel: flags.logLevel,
        ...(flags.catalog === undefined ? {} : { catalog: loadCatalog(flags.catalog) }),
        ...(process.env.EMULATOR_USERS === undefined ? {} : { users: parseUsers(process.env.EMULATOR_USERS) }),
      });
      await app.listen({ host: flags.host, port });
      closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
        if (err !== undefined) app.log.error({ err }, 'shutting down after an error');
        else app.log.info({ signal }, 'shutting down');
        await app.close();
      });
    });
}
