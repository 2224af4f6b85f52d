import t from 'tap';
import { eventFromStored, readableJobData, readableJobName, storedBody } from '../../src/events/stored-event.js';
import { envelopeOf } from '../helpers/envelope.js';

t.test('the body is stored once: as UTF-8 text when the bytes are valid UTF-8, else as base64', async (t) => {
  t.same(storedBody(Buffer.from('{"é":"ü"}')), { bodyEncoding: 'utf8', body: '{"é":"ü"}' });
  const invalid = Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]);
  t.same(storedBody(invalid), { bodyEncoding: 'base64', body: invalid.toString('base64') });
  t.same(storedBody(Buffer.alloc(0)), { bodyEncoding: 'utf8', body: '' });
});

t.test('a stored event reads back with its exact bytes and its payload', async (t) => {
  const bytes = Buffer.from('\ufeff{"a":[1,2]}');
  const stored = {
    ...envelopeOf('feature'),
    ...storedBody(bytes),
    changes: { url: 'https://x/extractChanges', serverGens: [1, 2] as [number, number], trusted: true },
  };
  const event = eventFromStored(stored);
  t.same(event.payload, { a: [1, 2] }, 'JSON: the body parsed past its byte order mark');
  t.equal(Buffer.compare(Buffer.from(event.rawBody, 'base64'), bytes), 0, 'rawBody: the exact bytes');
  t.same(event.changes, stored.changes);
  t.notOk('body' in event || 'bodyEncoding' in event, 'the stored fields are not passed on');
  t.same(eventFromStored({ ...stored, payload: { fields: true } }).payload, { fields: true }, 'a stored payload (a form) wins');
  t.throws(() => eventFromStored(envelopeOf('gp', 'default', 'not json')), SyntaxError);
});

t.test('the dashboard shows a stored event as consumers get it, and anything else as it is', async (t) => {
  const stored = envelopeOf('gp', 'default', '{"n":1}');
  t.match(readableJobData(stored), { id: stored.id, payload: { n: 1 } });
  t.notOk('rawBody' in (readableJobData(stored) as object), 'the payload, not its bytes in base64');
  const gp = { ...stored, service: { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' } };
  t.equal(
    readableJobName({ name: gp.type, data: gp }),
    `gp.job.failed · Tools/Buffer.GPServer · ${stored.id.slice(0, 12)}`,
    'a readable title',
  );
  const named = { ...envelopeOf('gp', 'default', '{"jobId":"j5e2a","jobStatus":"esriJobFailed"}'), service: gp.service };
  t.equal(
    readableJobName({ name: named.type, data: named }),
    `gp.job.failed · Tools/Buffer.GPServer · ${named.id.slice(0, 12)} · job j5e2a`,
    'a GP delivery that names its job: the GP job id in the title',
  );
  t.equal(readableJobName({ name: 'gap', data: { scope: 's' } }), 'gap', 'any other job by its name');
  for (const other of [{ hello: 'world' }, null, 'text', { body: 1, bodyEncoding: 'utf8' }, { body: 'x', bodyEncoding: 'hex' }]) {
    t.equal(readableJobData(other), other, JSON.stringify(other));
  }
  const broken = envelopeOf('gp', 'default', 'not json');
  t.equal(readableJobData(broken), broken, 'a body that is not JSON: as it is');
});
