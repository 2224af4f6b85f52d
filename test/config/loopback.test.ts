import t from 'tap';
import { isLoopbackHost } from '../../src/config/loopback.js';

t.test('loopback hosts are this machine only; every other one may be reached from others', async (t) => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]', '::ffff:127.0.0.1']) {
    t.ok(isLoopbackHost(host), host);
  }
  for (const host of ['0.0.0.0', '::', '[::]', '192.0.2.2', 'fd00::2', 'example.com', '127.0.0.1.example.com', '1127.0.0.1']) {
    t.notOk(isLoopbackHost(host), host);
  }
});
