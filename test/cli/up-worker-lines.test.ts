import t from 'tap';
import { upWorkerLines } from '../../src/cli/up-worker-lines.js';

const base = { cwd: '/home/me/geohook', embeddedRedis: true, prefix: 'geohook', subscriptionExists: false };

t.test('the worker lines make the subscription, then read it; with the embedded Redis, the Node line reads its URL file', async (t) => {
  t.same(upWorkerLines(base), [
    "worker     npx geohook subscriptions create my-app --types 'gp.*,feature.*,change.*' && npx geohook consume --subscription my-app  (another shell, this folder)",
    `in Node    REDIS_URL="$(cat /home/me/geohook/.geohook/redis/url)" node worker.mjs  (worker.mjs: subscribe({ subscription: 'my-app', handlers }); in this folder it finds this Redis by itself)`,
  ]);
});

t.test('a subscription an earlier run made is only read: making it again would stop the line', async (t) => {
  t.match(upWorkerLines({ ...base, subscriptionExists: true })[0], /^worker {5}npx geohook consume --subscription my-app {2}\(/);
});

t.test('a folder a shell would split is quoted, a prefix of its own is passed on', async (t) => {
  const [worker, node] = upWorkerLines({ ...base, cwd: "/home/me/Jo's hooks", prefix: 'staging' });
  t.match(worker, /--types '[^']+' --prefix staging && npx geohook consume --subscription my-app --prefix staging {2}/);
  t.match(node, `REDIS_URL="$(cat '/home/me/Jo'\\''s hooks/.geohook/redis/url')"`);
});

t.test('with a Redis of its own (REDIS_URL), the line says the shell needs the same', async (t) => {
  const lines = upWorkerLines({ ...base, embeddedRedis: false });
  t.equal(lines.length, 1, 'no URL file to point at');
  t.match(lines[0], /\(with the same REDIS_URL or GEOHOOK_CONFIG; in Node: subscribe\(/);
});
