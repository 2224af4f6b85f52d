import { Ajv } from 'ajv';
import t from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { parseSharedSecret, SHARED_SECRET_HEADER } from '../../src/config/relay-secrets.js';
import { GeohookError } from '../../src/errors.js';
import type { RoutedEvent } from '../../src/fanout/routed-event.js';
import { formatPowerAutomate } from '../../src/relay/formats/powerautomate.js';
import { escapeMrkdwn, formatSlack } from '../../src/relay/formats/slack.js';
import { standardBody } from '../../src/relay/formats/standard.js';
import { formatTeams } from '../../src/relay/formats/teams.js';
import { fixture } from '../helpers/paths.js';
import { changeUpdated, storedFeatureEvent, storedGpEvent } from '../helpers/relay-events.js';

const schema = (name: string): object => JSON.parse(fixture(`relay/${name}`).toString('utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(schema('adaptive-card-1.4.schema.json'));
const validTeams = ajv.compile(schema('teams-workflow-message.schema.json'));
const validSlack = ajv.compile(schema('slack-message.schema.json'));

/** The event without some of its optional fields. */
function without(event: ChangeEvent, ...fields: (keyof ChangeEvent)[]): ChangeEvent {
  const copy: Partial<ChangeEvent> = { ...event };
  for (const field of fields) delete copy[field];
  return copy as ChangeEvent;
}

const LINK = 'https://geohook.example.com/attachments/eyJzIjoiSG9zdGVkL1BhcmNlbHMu.tVtObFF5DrGVHQaH8k6vxripaRG2GfVQa3zuJp4Jx8I';

/** An attachment entry of a change event, with a link unless `url` is null. */
const attachment = (id: number, name: string, contentType: string, url: string | null = `${LINK}${id}`) => ({
  id,
  name,
  contentType,
  size: 2048,
  sha256: 'ab'.repeat(32),
  parentKey: { objectId: 55 },
  ...(url === null ? {} : { url }),
});

/** A created inspection with two photos and a PDF, linked (`attachments: "link"`). */
const withPhotos = changeUpdated({
  type: 'change.created',
  op: 'c',
  before: null,
  attachments: {
    adds: [
      attachment(1, 'meter [read](https://evil.example)*.jpg', 'image/jpeg'),
      attachment(2, 'site.png', 'image/png'),
      attachment(3, 'report <1> & more.pdf', 'application/pdf'),
    ],
    updates: [],
    deletes: [],
  },
});

const events: [string, RoutedEvent][] = [
  ['a submission with photos and a PDF, linked', withPhotos],
  [
    'a submission with photos, metadata only',
    changeUpdated({ attachments: { adds: [attachment(1, 'a.jpg', 'image/jpeg', null)], updates: [], deletes: [] } }),
  ],
  ['change.updated', changeUpdated()],
  ['change.created', without(changeUpdated({ type: 'change.created', op: 'c', before: null }), 'changedFields')],
  ['change.deleted', changeUpdated({ type: 'change.deleted', op: 'd', after: null })],
  ['change.read', without(changeUpdated({ type: 'change.read', op: 'r' }), 'before', 'editor', 'changedFields')],
  [
    'change.schema',
    without(changeUpdated({ type: 'change.schema', key: {}, after: null, schema: { added: ['notes'], removed: [] } }), 'op', 'before'),
  ],
  [
    'a long update',
    changeUpdated({ changedFields: ['status', 'owner'], after: { attributes: { status: 'x'.repeat(5000), owner: '<!channel>' } } }),
  ],
  ['feature.FeaturesEdited', storedFeatureEvent()],
  ['gp.job.failed', storedGpEvent()],
];

t.test('the schemas refuse what Teams and Slack refuse (so that passing them means something)', async (t) => {
  t.notOk(
    validTeams({
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: { type: 'AdaptiveCard', version: '1.4', body: [{ type: 'TextBlock' }] },
        },
      ],
    }),
    'a TextBlock without text',
  );
  t.notOk(
    validTeams({
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: { type: 'AdaptiveCard', version: '1.4', body: [], msteams: { width: 'Full' } },
        },
      ],
    }),
    'a property the card does not define',
  );
  t.notOk(
    validTeams({
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: { type: 'AdaptiveCard', version: '1.4', body: [{ type: 'FactSet', facts: [{ title: 'a', value: 1 }] }] },
        },
      ],
    }),
    'a fact whose value is not text',
  );
  t.notOk(
    validSlack({ text: 'x', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(3001) } }] }),
    'a section over 3000 characters',
  );
  t.notOk(
    validSlack({ text: 'x', blocks: [{ type: 'context', elements: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'x' })) }] }),
    '11 context elements',
  );
  t.notOk(
    validSlack({ text: 'x', blocks: [{ type: 'section', text: { type: 'plain_text', text: 'x', verbatim: true } }] }),
    'verbatim on plain_text',
  );
});

for (const [name, event] of events) {
  t.test(`${name}: a Teams message the Adaptive Card 1.4 schema accepts, and a Slack message the Block Kit shape accepts`, async (t) => {
    const teams = JSON.parse(formatTeams(event).body) as unknown;
    t.ok(validTeams(teams), JSON.stringify(validTeams.errors));
    const slack = JSON.parse(formatSlack(event).body) as unknown;
    t.ok(validSlack(slack), JSON.stringify(validSlack.errors));
  });
}

t.test('Teams: the summary line in bold, then the facts, as an Adaptive Card 1.4 attachment', async (t) => {
  const request = formatTeams(changeUpdated());
  t.equal(request.headers['content-type'], 'application/json');
  const message = JSON.parse(request.body) as {
    type: string;
    attachments: { contentType: string; content: { version: string; body: Record<string, unknown>[] } }[];
  };
  t.equal(message.type, 'message');
  t.equal(message.attachments[0]!.contentType, 'application/vnd.microsoft.card.adaptive');
  const card = message.attachments[0]!.content;
  t.equal(card.version, '1.4');
  t.match(card.body[0], { type: 'TextBlock', text: 'Parcels {4F95…}: status Open → Closed by inspector7', weight: 'bolder', wrap: true });
  t.match(card.body[1], {
    type: 'FactSet',
    facts: [
      { title: 'Type', value: 'change.updated' },
      { title: 'Service', value: 'Hosted/Parcels' },
    ],
  });
});

/** Every text of a Teams card: `fallbackText`, the TextBlock, the facts' titles and values. */
function teamsTexts(event: RoutedEvent): string[] {
  const card = (JSON.parse(formatTeams(event).body) as { attachments: { content: TeamsCard }[] }).attachments[0]!.content;
  const [block, factSet] = card.body;
  return [card.fallbackText, block!.text!, ...factSet!.facts!.flatMap(({ title, value }) => [title, value])];
}

interface TeamsCard {
  fallbackText: string;
  body: { text?: string; facts?: { title: string; value: string }[] }[];
}

const PHISH = '[Session expired, sign in](https://evil.example/x)';

t.test('issue 51 (N5): Markdown in a value, a name or a GP jobId makes no link, emphasis or line of its own in a Teams card', async (t) => {
  const injected: [string, RoutedEvent][] = [
    [
      'a changed value',
      changeUpdated({ changedFields: ['owner'], before: { attributes: { owner: '**Ada**' } }, after: { attributes: { owner: PHISH } } }),
    ],
    ['the editor', changeUpdated({ editor: { user: `_${PHISH}_` } })],
    ['the layer', changeUpdated({ layer: { id: 0, name: `~~Parcels~~ ${PHISH}` } })],
    [
      'a GP jobId',
      {
        ...storedGpEvent(),
        body: JSON.stringify({
          serviceType: 'GPServer',
          jobId: PHISH,
          folderName: 'Tools',
          serviceName: 'Buffer',
          events: [{ eventType: 'JobSucceeded' }],
        }),
      },
    ],
    ['a value on two lines', changeUpdated({ changedFields: ['owner'], after: { attributes: { owner: `Ada\n\n${PHISH}` } } })],
  ];
  for (const [name, event] of injected) {
    const texts = teamsTexts(event);
    t.ok(
      texts.some((text) => text.includes('Session expired, sign in')),
      `${name}: the value is shown`,
    );
    for (const text of texts) {
      t.notMatch(text, /\]\s*\(/, `${name}: no link syntax in "${text}"`);
      t.notMatch(text, /[[\]*~]/, `${name}: no bracket, asterisk or tilde`);
      t.notMatch(text, /(^|[^\p{L}\p{N}])_|_($|[^\p{L}\p{N}])/u, `${name}: no underscore that may open or close emphasis`);
      t.notMatch(text, /[\r\n]/, `${name}: on one line`);
    }
    t.ok(validTeams(JSON.parse(formatTeams(event).body)), `${name}: the schema accepts the card`);
  }
  t.match(
    teamsTexts(changeUpdated({ editor: { user: PHISH } }))[1],
    'by ［Session expired, sign in］(https://evil.example/x)',
    'shown in fullwidth brackets',
  );
  const fields = changeUpdated({ changedFields: ['last_edited_user'], after: { attributes: { last_edited_user: 'a_b' } } });
  t.match(teamsTexts(fields)[1], 'last_edited_user → a_b', 'an underscore joining letters stays');
});

t.test('issue 51 (N5): a delivery no signature verified is marked in the Teams card and the Slack message', async (t) => {
  const unverified: RoutedEvent = { ...storedGpEvent(), verified: false };
  const texts = teamsTexts(unverified);
  t.match(texts[0], /^UNVERIFIED: Tools\/Buffer\.GPServer: job j1a2b3 failed$/, 'the fallback text');
  t.match(texts[1], /^UNVERIFIED: /, 'the bold line');
  t.ok(texts.includes('Verified'), 'a Verified fact');
  t.match(JSON.parse(formatSlack(unverified).body), { text: /^UNVERIFIED: / });
  t.notMatch(teamsTexts(storedGpEvent())[1], /UNVERIFIED/, 'a verified delivery is not marked');
  t.notMatch(
    teamsTexts({ ...storedGpEvent(), verified: false, source: 'backfill' })[1],
    /UNVERIFIED/,
    "nor geohook's own backfilled event",
  );
});

t.test('Slack: text and a section with the summary, a context with the facts, & < > escaped', async (t) => {
  const line = 'Parcels {4F95…}: owner A &amp; B &lt;Holdings&gt; → &lt;!channel&gt; by inspector7';
  const event = changeUpdated({
    changedFields: ['owner'],
    before: { attributes: { owner: 'A & B <Holdings>' } },
    after: { attributes: { owner: '<!channel>' } },
  });
  const message = JSON.parse(formatSlack(event).body) as {
    text: string;
    blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[];
  };
  t.equal(message.text, line);
  t.equal(message.blocks[0]!.text!.text, line);
  t.equal(message.blocks[1]!.type, 'context');
  t.equal(message.blocks[1]!.elements![0]!.text, '*Type:* change.updated');
  t.notMatch(formatSlack(event).body, '<!channel>', 'no mention can be forged');
  t.equal(escapeMrkdwn('a & <b> &amp;'), 'a &amp; &lt;b&gt; &amp;amp;');
});

t.test('Slack: a line longer than a section takes is cut, never inside an entity', async (t) => {
  const event = changeUpdated({
    changedFields: ['status'],
    before: { attributes: { status: '' } },
    after: { attributes: { status: 'x' } },
    layer: { id: 0, name: `${'&'.repeat(2000)}` },
  });
  const message = JSON.parse(formatSlack(event).body) as { text: string };
  t.ok(message.text.length <= 3000, `${message.text.length} characters`);
  t.match(message.text, /(&amp;)+…$/);
});

t.test('issue 55: a Teams card shows linked photos in an ImageSet and other attachments as buttons, their names plain', async (t) => {
  const card = (JSON.parse(formatTeams(withPhotos).body) as { attachments: { content: { body: Record<string, unknown>[] } }[] })
    .attachments[0]!.content;
  t.same(card.body[2], {
    type: 'ImageSet',
    imageSize: 'Medium',
    images: [
      { type: 'Image', url: `${LINK}1`, altText: 'meter ［read］(https://evil.example)＊.jpg' },
      { type: 'Image', url: `${LINK}2`, altText: 'site.png' },
    ],
  });
  t.same(card.body[3], { type: 'ActionSet', actions: [{ type: 'Action.OpenUrl', title: 'report <1> & more.pdf', url: `${LINK}3` }] });
  t.ok(teamsTexts(withPhotos).includes('Attachments'), 'the names in a fact too');
  const metadataOnly = changeUpdated({ attachments: { adds: [attachment(1, 'a.jpg', 'image/jpeg', null)], updates: [], deletes: [] } });
  const plain = (JSON.parse(formatTeams(metadataOnly).body) as { attachments: { content: { body: unknown[] } }[] }).attachments[0]!.content;
  t.equal(plain.body.length, 2, 'without links, the names only, in the facts');
  t.ok(teamsTexts(metadataOnly).includes('a.jpg'));
});

t.test('issue 55: a Slack message shows linked photos as image blocks and links the other attachments, escaped', async (t) => {
  const message = JSON.parse(formatSlack(withPhotos).body) as { blocks: Record<string, unknown>[] };
  t.same(message.blocks.slice(2), [
    { type: 'image', image_url: `${LINK}1`, alt_text: 'meter [read](https://evil.example)*.jpg' },
    { type: 'image', image_url: `${LINK}2`, alt_text: 'site.png' },
    { type: 'section', text: { type: 'mrkdwn', text: `<${LINK}3|report &lt;1&gt; &amp; more.pdf>`, verbatim: true } },
  ]);
  t.equal(JSON.parse(formatSlack(changeUpdated()).body).blocks.length, 2, 'an event without attachments: as before');
});

t.test('issue 55: Power Automate and the standard format carry the attachments, links included, as data', async (t) => {
  t.same(JSON.parse(formatPowerAutomate(withPhotos).body).attachments, withPhotos.attachments);
  t.same(JSON.parse(standardBody(withPhotos)).data.attachments, withPhotos.attachments);
});

t.test('Power Automate: the event JSON, the shared secret in x-geohook-secret, webhook-id the event id', async (t) => {
  const event = changeUpdated();
  const request = formatPowerAutomate(event, { secret: 'a-long-enough-shared-secret' });
  t.same(JSON.parse(request.body), event);
  t.equal(request.headers[SHARED_SECRET_HEADER], 'a-long-enough-shared-secret');
  t.equal(request.headers['webhook-id'], event.id);
  t.equal(request.headers['content-type'], 'application/json');
  t.notOk(SHARED_SECRET_HEADER in formatPowerAutomate(event).headers, 'no secret, no header');
  const gp = JSON.parse(formatPowerAutomate(storedGpEvent()).body) as Record<string, unknown>;
  t.match(gp, { type: 'gp.job.failed', payload: { jobId: 'j1a2b3' } });
  t.notOk('rawBody' in gp);
});

t.test('a Power Automate secret that is short, long, or not printable ASCII is a configuration error', async (t) => {
  const codeOf = (secret: string): string | undefined => {
    try {
      parseSharedSecret(secret, 'relays[0].secret');
    } catch (err) {
      return err instanceof GeohookError ? err.code : 'not a GeohookError';
    }
    return undefined;
  };
  t.equal(codeOf('short'), 'GEOHOOK_ERR_CONFIG');
  t.equal(codeOf('x'.repeat(257)), 'GEOHOOK_ERR_CONFIG');
  t.equal(codeOf('sixteen chars ok'), 'GEOHOOK_ERR_CONFIG', 'a space');
  t.equal(codeOf('sixteen-chars-ok\n'), 'GEOHOOK_ERR_CONFIG', 'a line break');
  t.equal(codeOf('sixteen-chars-ok'), undefined);
});
