import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import type { RelayRouteConfig } from '../../src/config/relay-schema.js';
import { relayJobOptions, relayQueueName } from '../../src/relay/relay-queues.js';
import { createRelayRoute } from '../../src/relay/relay-route.js';
import { readRelayStatus } from '../../src/relay/relay-status.js';
import { startRelays } from '../../src/relay/start-relays.js';
import { compileTransform, MAX_TRANSFORM_BODY_BYTES, RelayTransformError } from '../../src/relay/transform.js';
import { startSink } from '../helpers/http-sink.js';
import { repoPath } from '../helpers/paths.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { changeUpdated, SECRET_A } from '../helpers/relay-events.js';
import { waitFor } from '../helpers/wait.js';

/** docs/relays.md's Power Automate example: a flat object a flow reads without a Parse JSON step. */
const FLAT = `{
  "event": type,
  "parcel": after.attributes.parcel_id,
  "status": after.attributes.status,
  "previousStatus": before.attributes.status,
  "editor": editor.user,
  "at": ts
}`;

/** docs/relays.md's CloudEvents example: a structured-mode envelope. */
const CLOUD_EVENT = `{
  "specversion": "1.0",
  "id": id,
  "source": service.url & "/" & layer.id,
  "type": "com.example.geohook." & type,
  "time": ts,
  "subject": $string(key.objectId),
  "datacontenttype": "application/json",
  "data": { "before": before.attributes, "after": after.attributes, "changedFields": changedFields }
}`;

/** docs/relays.md's Teams example: a card of one's own, editors' values made plain. */
const TEAMS_CARD = `{
  "type": "message",
  "attachments": [{
    "contentType": "application/vnd.microsoft.card.adaptive",
    "content": {
      "type": "AdaptiveCard",
      "version": "1.4",
      "body": [
        { "type": "TextBlock", "weight": "bolder", "text": "Parcel " & $teamsText($string(after.attributes.parcel_id)) & " is " & $teamsText(after.attributes.status) },
        { "type": "TextBlock", "text": "Owner: " & $teamsText(after.attributes.owner), "wrap": true }
      ]
    }
  }]
}`;

const event = changeUpdated({
  after: { attributes: { objectid: 55, parcel_id: 'P-55', status: 'Closed', owner: '[x](https://evil.example)' } },
});

t.test('a transform builds the body: a flat object, a CloudEvent, a Teams card whose values stay text', async (t) => {
  t.same(JSON.parse(await compileTransform(FLAT, 'flat')(event, event.id)), {
    event: 'change.updated',
    parcel: 'P-55',
    status: 'Closed',
    previousStatus: 'Open',
    editor: 'inspector7',
    at: '2026-11-25T14:59:58.120Z',
  });
  t.match(JSON.parse(await compileTransform(CLOUD_EVENT, 'ce')(event, event.id)), {
    specversion: '1.0',
    id: event.id,
    source: `${event.service.url}/0`,
    type: 'com.example.geohook.change.updated',
    subject: '55',
    data: { before: { status: 'Open' }, after: { status: 'Closed' }, changedFields: ['status'] },
  });
  const card = JSON.parse(await compileTransform(TEAMS_CARD, 'teams')(event, event.id)) as {
    attachments: [{ content: { body: { text: string }[] } }];
  };
  t.same(
    card.attachments[0].content.body.map((block) => block.text),
    ['Parcel P-55 is Closed', 'Owner: ［x］(https://evil.example)'],
    '$teamsText leaves no link an editor wrote',
  );
  t.equal(JSON.parse(await compileTransform('{"text": $slackText("<!channel> & co")}', 's')({}, 'e1')).text, '&lt;!channel&gt; &amp; co');
});

t.test(
  'a transform that throws, loops, recurses, grows or yields no object fails with GEOHOOK_ERR_RELAY_TRANSFORM and its text',
  async (t) => {
    const failure = async (expression: string, data: unknown = event): Promise<RelayTransformError> => {
      try {
        await compileTransform(expression, 'r')(data, 'e1');
      } catch (err) {
        if (err instanceof RelayTransformError) return err;
        throw err;
      }
      throw new Error(`${expression} gave a body`);
    };
    const thrown = await failure('after.attributes.status = "Closed" ? $error("closed parcels are not sent") : {}');
    t.equal(thrown.code, 'GEOHOOK_ERR_RELAY_TRANSFORM');
    t.equal(
      thrown.message,
      'route "r": the transform failed on event e1: it threw: closed parcels are not sent (JSONata D3137, at line 1, column 44)',
    );
    t.match(
      (await failure('{"n": after.attributes.status + 1}')).message,
      /it threw: .*must evaluate to a number \(JSONata T2001, at line 1, column \d+\)/,
    );
    // An endless loop: without the bound it would never fail, and the test would end at tap's limit.
    t.match(
      (await failure('( $loop := function($n) { $n < 0 ? $n : $loop($n + 1) }; {"n": $loop(0)} )')).message,
      /it took more than 10000 steps \(a loop\?\)$|JSONata D1012/,
      'a loop ends with the step bound',
    );
    t.match((await failure('{"n": [1..1000000]}')).message, /JSONata D2015/, 'a sequence past its bound');
    t.match((await failure('[1, 2]')).message, /it gave an array, not a JSON object$/);
    t.match((await failure('"text"')).message, /it gave a string, not a JSON object$/);
    t.match((await failure('nothing.here')).message, /it gave nothing \(no part of the expression matched the event\), not a JSON object$/);
    t.match(
      (await failure('{"big": $pad("", 2000000, "x")}')).message,
      new RegExp(`its body is \\d+ bytes, more than ${MAX_TRANSFORM_BODY_BYTES}$`),
    );
  },
);

const headersOf = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])));

t.test(
  'issue 54: the transformed body is what is signed; an event the transform throws on is a dead letter with its text, the next one delivered',
  async (t) => {
    const redis = await startRedis(t);
    const webhook = new Webhook(SECRET_A);
    const verified: { id: string; contentType: string | undefined; payload: unknown }[] = [];
    const sink = await startSink(t, (request, response, body) => {
      try {
        const payload = webhook.verify(body.toString('utf8'), headersOf(request.headers));
        verified.push({ id: String(request.headers['webhook-id']), contentType: request.headers['content-type'], payload });
        response.writeHead(204).end();
      } catch {
        response.writeHead(401).end();
      }
    });
    const flows = await startSink(t, (_request, response) => response.writeHead(202).end());
    const routes: RelayRouteConfig[] = [
      {
        name: 'cloudevents',
        url: `${sink.url}/in`,
        types: ['change.*'],
        format: 'standard',
        secret: SECRET_A,
        headers: { 'content-type': 'application/cloudevents+json' },
        transform: `after.attributes.status = "Bad" ? $error("status Bad is not sent") : ${CLOUD_EVENT}`,
      },
      { name: 'flow', url: flows.url, types: ['change.*'], format: 'powerautomate', secret: 'a-shared-secret-of-24ch', transform: FLAT },
      { name: 'list', url: flows.url, types: ['change.*'], format: 'slack', transform: '[type]' },
    ];
    const prefix = uniquePrefix();
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    t.teardown(() => connection.disconnect());
    const completedJobs = { ageSeconds: 3600, count: 1000 };
    const relays = startRelays({ routes, connection, prefix, completedJobs, logger: pino({ level: 'silent' }) });
    t.teardown(() => relays.close());
    const events: ChangeEvent[] = ['Closed', 'Bad', 'Pending'].map((status, index) =>
      changeUpdated({ id: `event${index}`, after: { attributes: { objectid: index, parcel_id: `P-${index}`, status } } }),
    );
    for (const route of routes) {
      const queue = new Queue(relayQueueName(route.name), { connection, prefix });
      // One by one, in order: the route goes on after the event it dead-lettered.
      for (const data of events)
        await queue.add(data.type, data, { ...relayJobOptions(createRelayRoute(route), completedJobs), jobId: data.id });
      await queue.close();
    }

    await waitFor(
      'two CloudEvents and three flow bodies',
      () => verified.length >= 2 && flows.received.filter((r) => r.url === '/').length >= 3,
    );
    t.same(
      verified.map(({ id }) => id),
      ['event0', 'event2'],
      'the event before and the event after the one the transform threw on',
    );
    t.match(verified[1], {
      contentType: 'application/cloudevents+json',
      payload: { specversion: '1.0', id: 'event2', type: 'com.example.geohook.change.updated', data: { after: { status: 'Pending' } } },
    });
    t.equal(sink.received.length, 2, 'the event the transform threw on was never sent');
    const flowBodies = flows.received.map((request) => JSON.parse(request.body.toString('utf8')) as { status?: string });
    t.same(
      flowBodies.map((body) => body.status),
      ['Closed', 'Bad', 'Pending'],
    );
    t.equal(flows.received[0]!.headers['x-geohook-secret'], 'a-shared-secret-of-24ch', 'the format keeps its headers');
    t.equal(flows.received[0]!.headers['content-type'], 'application/json');

    const failedReason = async (route: string, id: string) => {
      const queue = new Queue(relayQueueName(route), { connection, prefix });
      try {
        const job = await queue.getJob(id);
        return (await job?.isFailed()) === true ? { reason: job!.failedReason, attempts: job!.attemptsMade } : undefined;
      } finally {
        await queue.close();
      }
    };
    const dead = await waitFor('the dead letter', () => failedReason('cloudevents', 'event1'));
    t.equal(dead.attempts, 1, 'not tried again: it would fail the same way');
    t.match(
      dead.reason,
      /^GEOHOOK_ERR_RELAY_TRANSFORM: route "cloudevents": the transform failed on event event1: it threw: status Bad is not sent \(JSONata D3137, at line 1, column \d+\)$/,
    );
    const list = await waitFor('three dead letters of the route whose transform gives an array', async () => {
      const reasons = await Promise.all(events.map(({ id }) => failedReason('list', id)));
      return reasons.every((reason) => reason !== undefined) && reasons;
    });
    t.match(list[0], { reason: /it gave an array, not a JSON object$/ });
    const status = await waitFor('the counts written', async () => {
      const { routes: read } = await readRelayStatus(connection, prefix, routes);
      return read[0]!.delivered === 2 && read[0]!.deadLetters === 1 && read[2]!.lastError !== undefined && read;
    });
    t.match(status[0], { lastError: /the transform failed on event event1/ });
    t.match(status[2], { delivered: 0, deadLetters: 3, lastError: /it gave an array/ });
  },
);

t.test("docs/relays.md's transform examples each give an object for a change event", async (t) => {
  const page = readFileSync(repoPath('docs', 'relays.md'), 'utf8');
  const section = page.slice(page.indexOf('## Transforms'), page.indexOf('## Formats'));
  const routes = [...section.matchAll(/```json\n(\{\n[\s\S]*?\n\})\n```/g)].map(
    (m) => JSON.parse(m[1]!) as { name: string; transform?: string },
  );
  const examples = routes.filter((route) => route.transform !== undefined);
  t.same(
    examples.map((route) => route.name),
    ['permits-flow', 'cloudevents', 'closed-parcels'],
  );
  const [flat, cloudEvent, card] = await Promise.all(
    examples.map(async (route) => JSON.parse(await compileTransform(route.transform!, route.name)(event, event.id)) as object),
  );
  t.same(flat, JSON.parse(await compileTransform(FLAT, 'flat')(event, event.id)), 'the flat object of the page is the one tested above');
  t.same(cloudEvent, JSON.parse(await compileTransform(CLOUD_EVENT, 'ce')(event, event.id)), 'so is its CloudEvent');
  t.same(card, JSON.parse(await compileTransform(TEAMS_CARD, 'teams')(event, event.id)), 'and its Teams card');
});
