import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { CLI } from '../helpers/cli.js';
import { nodeCommand } from '../helpers/node-process.js';
import { repoRoot } from '../helpers/paths.js';

const run = promisify(execFile);
const workload = join(repoRoot, 'dist-test/test/helpers/heap-workload.js');
const optionsSpy = join(repoRoot, 'dist-test/test/helpers/v8-options-spy.js');

/** The largest heap of the workload (which bounds its growth as the CLI does), started with `nodeArgs`. */
async function peakHeapMib(nodeArgs: string[]): Promise<number> {
  const command = nodeCommand(workload, [], process.env, { coverage: true, nodeArgs });
  const { stdout } = await run(command.file, command.args, { env: command.env });
  return (JSON.parse(stdout) as { peakHeapMib: number }).peakHeapMib;
}

t.test('the CLI bounds V8 heap growth to twice the live heap, unless node was given its own', async (t) => {
  // Four times the live heap, given on the command line: what V8 allows by itself while its collections are fast.
  const given = await peakHeapMib(['--heap-growing-percent=300']);
  const bounded = await peakHeapMib([]);
  t.ok(
    bounded <= given * 0.75,
    `the same garbage peaks at ${bounded.toFixed(0)} MiB of heap bounded, ${given.toFixed(0)} MiB with the growth node was given`,
  );
});

t.test('every geohook command sets the bound on itself before its work, unless node was given its own', async (t) => {
  /** The V8 options `geohook --version` set on itself, run with `nodeArgs`. */
  const optionsSet = async (nodeArgs: string[]): Promise<string[]> => {
    const command = nodeCommand(
      CLI,
      ['--version'],
      { PATH: process.env.PATH ?? '' },
      { coverage: true, nodeArgs: ['--import', optionsSpy, ...nodeArgs] },
    );
    const { stderr } = await run(command.file, command.args, { env: command.env });
    return [...stderr.matchAll(/^v8 option: (.*)$/gm)].map((match) => match[1]!);
  };
  t.same(await optionsSet([]), ['--heap-growing-percent=100']);
  t.same(await optionsSet(['--heap-growing-percent=300']), [], "node's own option is kept");
});
