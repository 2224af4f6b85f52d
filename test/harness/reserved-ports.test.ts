import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';
import { holdPort, reservePort } from '../../harness/reserved-ports.js';
import { isRunning } from '../../src/embedded/redis-server.js';

const MODULE = new URL('../../harness/reserved-ports.js', import.meta.url).href;

t.test('a port another running tool process holds is not held, and is taken over once that process is gone', async (t) => {
  const port = await reservePort();
  t.notOk(holdPort(port), 'this process holds it already: it is not handed out twice');
  // A second process holds a port of its own, then dies without its exit handler (SIGKILL).
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', `import { reservePort } from '${MODULE}'; console.log(await reservePort()); process.stdin.resume();`],
    { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  t.teardown(() => child.kill('SIGKILL'));
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const held = Number(line.toString().trim());
  t.notOk(holdPort(held), 'a port a running process holds is not held');
  child.kill('SIGKILL');
  await once(child, 'exit');
  t.notOk(isRunning(child.pid!), 'the holder is gone');
  t.ok(holdPort(held), 'what a dead process held is taken over');
});
