import type { Command } from 'commander';
import { GeohookError } from '../errors.js';
import { sign } from '../signature/sign.js';
import { printJson } from './print.js';
import { readInput } from './read-input.js';
import { resolveKey } from './sign.js';

interface SendOptions {
  key?: string;
  contentType: string;
  header: string;
  timeout: string;
}

/** `geohook send URL [--key KEY] [--content-type T] [FILE]`: one delivery, as the GIS server sends it. */
export function registerSend(command: Command): void {
  command
    .argument('<url>', 'receiver URL, e.g. http://127.0.0.1:8080/webhooks/default')
    .argument('[file]', 'body to send; stdin when omitted or "-"')
    .option('-k, --key <key>', 'sign with this key (HOOK_SECRETS is not used: send unsigned unless a key is given)')
    .option('-t, --content-type <type>', 'content type of the body', 'application/json')
    .option('--header <name>', 'header that carries the signature', 'x-service')
    .option('--timeout <ms>', 'give up after this many milliseconds', '10000')
    .action(async (url: string, file: string | undefined, options: SendOptions) => {
      const body = await readInput(file);
      const headers: Record<string, string> = { 'content-type': options.contentType };
      if (options.key !== undefined) headers[options.header] = sign(await resolveKey(options.key), body);
      let response: Response;
      try {
        response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(Number(options.timeout)) });
      } catch (err) {
        throw new GeohookError(
          'GEOHOOK_ERR_SEND_FAILED',
          `${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`,
        );
      }
      const text = await response.text();
      let answer: unknown = text;
      try {
        answer = JSON.parse(text);
      } catch {
        // Not JSON: printed as text.
      }
      printJson({ status: response.status, body: answer });
      if (!response.ok) throw new GeohookError('GEOHOOK_ERR_SEND_FAILED', `${url} answered ${response.status}`);
    });
}
