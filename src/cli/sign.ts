import type { Command } from 'commander';
import { loadConfig } from '../config/load-config.js';
import { GeohookError } from '../errors.js';
import { sign } from '../signature/sign.js';
import { printLine } from './print.js';
import { readInput } from './read-input.js';

/** The key of `--key`, else the first of HOOK_SECRETS. */
export async function resolveKey(key: string | undefined): Promise<string> {
  const resolved = key ?? loadConfig().hooks.get('default')!.secrets[0];
  if (resolved === undefined || resolved === '') {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', '--key: a signature key is required (or set HOOK_SECRETS)');
  }
  return resolved;
}

/** `geohook sign --key KEY [FILE]`: prints the signature header value for the bytes of FILE or stdin. */
export function registerSign(command: Command): void {
  command
    .argument('[file]', 'file to sign; stdin when omitted or "-"')
    .option('-k, --key <key>', 'signature key (default: the first key of HOOK_SECRETS)')
    .action(async (file: string | undefined, options: { key?: string }) => {
      printLine(sign(await resolveKey(options.key), await readInput(file)));
    });
}
