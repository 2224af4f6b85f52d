import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { sign } from '../../../src/signature/sign.js';
import { CLI, geohookCommand } from '../../helpers/cli.js';
import { repoPath } from '../../helpers/paths.js';
import { waitFor } from '../../helpers/wait.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

const README = repoPath('README.md');

/** The lines of the README's picture of `npm start`. */
function readmeOutput(): string[] {
  const text = readFileSync(README, 'utf8');
  const block = /<!-- npm-start-output -->\n```\n([\s\S]*?)```\n<!-- \/npm-start-output -->/.exec(text);
  if (block === null) throw new Error('README.md has no npm-start-output block');
  return block[1]!.trimEnd().split('\n');
}

/**
 * A line with what differs from run to run and machine to machine made constant: times, ports, ids, keys,
 * tokens, the Redis version. `geohook up` listens on 127.0.0.1 alone: no other interface is listed.
 */
function normalised(lines: string[]): string[] {
  return lines.map((line) =>
    line
      .replace(/^\[\d\d:\d\d:\d\d\]/, '[TIME]')
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
      .replace(/\b[0-9a-f]{64}\b/g, 'EVENT-ID')
      .replace(/\b[0-9a-f]{12}…/g, 'EVENT-ID…')
      .replace(/ job j[0-9a-f]{32}\b/g, ' job JOB-ID')
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, 'WEBHOOK-ID')
      .replace(/token=[A-Za-z0-9_-]+/g, 'token=TOKEN')
      .replace(/\$\(cat '?\/[^)]*\/\.geohook\/redis\/url'?\)/g, '$(cat DIR/.geohook/redis/url)')
      .replace(/(?<![\w-])[\w-]{43}(?![\w-])/g, 'SIGNING-KEY')
      .replace(/Redis \d+\.\d+\.\d+/g, 'Redis VERSION'),
  );
}

const lines = (text: string): string[] => text.trimEnd().split('\n').filter(Boolean);

/** Runs `command` as a person pasting it into a shell in `cwd`; resolves once its output matches `ready`. */
async function pasteInShell(t: Test, command: string, cwd: string, ready: RegExp): Promise<{ output: () => string; stop: () => void }> {
  const shell = spawn('/bin/sh', ['-c', command], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: stopping it stops what the shell started
  });
  const stop = (): void => {
    if (shell.exitCode === null && shell.signalCode === null) process.kill(-shell.pid!, 'SIGKILL');
  };
  t.teardown(stop);
  let output = '';
  shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  shell.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(`${command} to be ready`, async () => {
    if (shell.exitCode !== null) throw new Error(`exited with ${shell.exitCode}:\n${output}`);
    return ready.test(output);
  });
  return { output: () => output, stop };
}

t.test(
  'geohook up for a person (LOG_FORMAT=pretty) prints what the README shows: start-up lines, then one line per delivery and per event',
  async (t) => {
    const dir = t.testdir();
    const [port, emulatorPort] = [await findFreePort(), await findFreePort()];
    const childCommand = geohookCommand(['up'], { PORT: String(port), EMULATOR_PORT: String(emulatorPort), LOG_FORMAT: 'pretty' });
    const child = spawn(childCommand.file, childCommand.args, { cwd: dir, env: childCommand.env, stdio: ['ignore', 'pipe', 'pipe'] });
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor('geohook up to be ready', async () => /^ready: /m.test(stderr));

    const fire = /^fire a GP job: {2}(curl .*)$/m.exec(stderr)?.[1];
    t.ok(fire, 'the command that fires a GP job is printed');
    await fetch(`http://127.0.0.1:${emulatorPort}/emulator/services/Tools/Buffer.GPServer/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"outcome":"succeeded"}',
    });
    await waitFor('the event line', async () => /event gp\.job\.succeeded/.test(stdout));

    // The signing key printed signs a delivery the receiver takes as the webhooks' own.
    const key = /^signing key {2}(\S+) {2}/m.exec(stderr)?.[1];
    t.ok(key, 'the generated signing key is printed');
    const body = '{"serviceType":"GPServer","jobId":"by-hand","events":[{"eventType":"esriJobSucceeded"}]}';
    const signed = await fetch(`http://127.0.0.1:${port}/webhooks/default`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service': sign(key!, body) },
      body,
    });
    t.equal(signed.status, 202, 'a delivery signed with it is accepted');
    const byHand = ((await signed.json()) as { id: string }).id;
    // Issue 53: one line for the event, with its GP job id and the start of its id; the receiver's own at debug.
    const line = await waitFor('its event line', async () => stdout.split('\n').find((text) => text.includes('job by-hand')));
    t.match(line, / INFO: event gp\.job\.succeeded (.* )?[0-9a-f]{12}… job by-hand$/);
    t.ok(byHand.startsWith(/ ([0-9a-f]{12})… job by-hand$/.exec(line)?.[1] ?? '-'), 'the start of its event id');
    t.notMatch(stderr, /delivery accepted/, 'no second line for it');

    // The sign-in link opens the dashboard.
    const link = /^dashboard {2}(http\S+)$/m.exec(stderr)?.[1];
    t.ok(link, 'the dashboard sign-in link is printed');
    const signIn = await fetch(link!, { redirect: 'manual' });
    t.equal(signIn.status, 303, 'the link signs in');
    const board = await fetch(`http://127.0.0.1:${port}/ui/`, { headers: { cookie: signIn.headers.get('set-cookie')!.split(';')[0]! } });
    t.equal(board.status, 200, 'the session opens the board');
    // What the README is compared with: the workers below add their own events.
    const [upStdout, upStderr] = [stdout, stderr];

    // issue 53: the worker lines, pasted into another shell (npx geohook is this build's binary), each get an event.
    const fireGp = (): Promise<string> =>
      fetch(`http://127.0.0.1:${emulatorPort}/emulator/services/Tools/Buffer.GPServer/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"outcome":"succeeded"}',
      }).then((response) => response.text());
    const command = /^worker {5}(.+?) {2}\(another shell, this folder\)$/m.exec(stderr)?.[1];
    t.match(command, /^npx geohook subscriptions create my-app .* && npx geohook consume --subscription my-app$/, 'the worker line');
    const consumer = await pasteInShell(t, command!.replaceAll('npx geohook', `'${process.execPath}' '${CLI}'`), dir, /"msg":"consuming/);
    await fireGp();
    await waitFor('the worker line to print the GP event', async () => /"type":"gp\.job\.succeeded"/.test(consumer.output()));
    consumer.stop();
    const inNode = /^in Node {4}(REDIS_URL=.+? node worker\.mjs) {2}\(/m.exec(stderr)?.[1];
    t.ok(inNode, 'the Node line');
    const elsewhere = mkdtempSync(join(tmpdir(), 'geohook-worker-')); // a project of the user's, beside the clone
    t.teardown(() => rmSync(elsewhere, { recursive: true, force: true }));
    writeFileSync(
      join(elsewhere, 'worker.mjs'),
      `import { subscribe } from ${JSON.stringify(repoPath('dist', 'index.js'))};
const subscription = subscribe({ subscription: 'my-app', handlers: { 'gp.*': (event) => console.log('handled', event.type) } });
await subscription.ready();
console.log('worker ready');`,
    );
    const worker = await pasteInShell(t, inNode!, elsewhere, /worker ready/);
    await fireGp();
    await waitFor('the Node worker to handle the GP event', async () => /handled gp\.job\.succeeded/.test(worker.output()));
    worker.stop();

    child.kill('SIGINT');
    t.equal((await once(child, 'exit'))[0], 0);

    const expected = normalised(readmeOutput());
    const isEventLine = (line: string): boolean => / INFO: event /.test(line);
    const shown = (text: string): string[] => lines(text).filter((line) => !line.includes(byHand.slice(0, 12)));
    const shownStderr = shown(upStderr).filter((line) => !/shutting down|geohook stopped|dashboard login/.test(line));
    // Registration checks services at once: their `webhook created` lines come in either order.
    const isCreated = (line: string): boolean => / webhook created /.test(line);
    const createdInOrder = (all: string[]): string[] => {
      const created = all.filter(isCreated).sort();
      return all.map((line) => (isCreated(line) ? created.shift()! : line));
    };
    t.same(
      createdInOrder(normalised(shownStderr)),
      createdInOrder(expected.filter((line) => !isEventLine(line))),
      'stderr is what the README shows',
    );
    t.same(normalised(shown(upStdout)), expected.filter(isEventLine), 'stdout holds one readable line per event');
    t.notMatch(stderr, /incoming request|request completed/, 'request logs wait for LOG_LEVEL=debug');
    t.notMatch(stderr + stdout, /"level":/, 'no JSON log lines');
  },
);
