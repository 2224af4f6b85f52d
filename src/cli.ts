#!/usr/bin/env node
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { registerAdmin } from './cli/admin.js';
import { registerConsume } from './cli/consume.js';
import { registerEmulator } from './cli/emulator.js';
import { registerEvents } from './cli/events.js';
import { printError } from './cli/print.js';
import { registerSend } from './cli/send.js';
import { registerServe } from './cli/serve.js';
import { registerSign } from './cli/sign.js';
import { GeohookError } from './errors.js';
import { registerUp } from './main.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const program = new Command('geohook')
  .description('Receive GIS service webhooks reliably: verify, classify, durably enqueue to BullMQ')
  .version(version);
registerUp(program);
registerServe(program);
registerEmulator(program);
registerConsume(program);
registerSign(program);
registerSend(program);
registerAdmin(program);
registerEvents(program);

try {
  await program.parseAsync();
} catch (err) {
  printError(err instanceof GeohookError ? err.message : `unexpected error: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
}
