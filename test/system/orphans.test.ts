import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t from 'tap';
import { isRunning } from '../../src/embedded/redis-server.js';
import { repoPath } from '../helpers/paths.js';
import { waitFor } from '../helpers/wait.js';

// A test process killed with SIGKILL (tap's, at a file's time limit) runs no exit handler: the servers its helpers
// started must stop all the same, or they pile up run after run.
t.test('the Redis of a test process killed with SIGKILL stops with it', async (t) => {
  const helper = repoPath('dist-test', 'test', 'helpers', 'redis.js');
  const program = [
    `const { startRedis } = await import(${JSON.stringify(helper)});`,
    'const redis = await startRedis({ teardown() {} });',
    'console.log(redis.pid);',
    'setInterval(() => {}, 1000);',
  ].join('\n');
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill('SIGKILL'));
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const pid = Number(line);
  t.ok(isRunning(pid), `its redis-server (pid ${pid}) runs`);
  child.kill('SIGKILL');
  await once(child, 'exit');
  await waitFor(`redis-server ${pid} to stop once its test process was killed`, () => !isRunning(pid));
  t.pass('the redis-server stopped');
});
