import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { generateToken } from '../../src/arcgis-request/generate-token.js';
import { jsonAnswer, recordingFetch, type Step } from './helpers/recording-fetch.js';

const GP = 'Tools/Buffer.GPServer';
const baseUrl = 'http://gis.example/arcgis/admin';
const clientAnswering = (...answers: Step[]) => {
  const recorder = recordingFetch(answers);
  return {
    client: createAdminClient({ baseUrl, auth: { token: 'static-token-1234' }, fetch: recorder.fetch, retry: { delaysMs: [] } }),
    requests: recorder.requests,
  };
};

t.test('a success answer without what the operation returns is an AdminApiError naming it', async (t) => {
  await t.rejects(clientAnswering(jsonAnswer({})).client.webhooks.list(GP), {
    code: 'GEOHOOK_ERR_ADMIN_API',
    message: "/arcgis/admin/services/Tools/Buffer.GPServer/webhooks: the answer has no 'webhooks' array",
    url: `${baseUrl}/services/Tools/Buffer.GPServer/webhooks`,
  });
  await t.rejects(clientAnswering(jsonAnswer({ status: 'success' })).client.webhooks.create(GP, { name: 'n', hookUrl: 'https://h/x' }), {
    message: /the answer has no webhook id$/,
  });
  await t.rejects(clientAnswering(jsonAnswer({ webhooks: {} })).client.webhooks.listOrganization(), { message: /no 'webhooks' array/ });
  await t.rejects(clientAnswering(jsonAnswer({ services: [] })).client.findServices(), { message: /no 'filteredServices' array/ });
  await t.rejects(clientAnswering(jsonAnswer({})).client.webhooks.notificationStatus(GP, 'id'), {
    message: /no 'webhookNotificationStatus' array/,
  });
});

t.test('a placement policy answered as a JSON string is parsed; a broken or missing one is an error', async (t) => {
  const policy = { placementPolicy: [] };
  t.same(await clientAnswering(jsonAnswer({ servicePlacementPolicy: JSON.stringify(policy) })).client.placement.get(GP), policy);
  await t.rejects(clientAnswering(jsonAnswer({ servicePlacementPolicy: '{broken' })).client.placement.get(GP), {
    message: /no 'servicePlacementPolicy' object/,
  });
  await t.rejects(clientAnswering(jsonAnswer({ status: 'success' })).client.placement.get(GP), {
    message: /no 'servicePlacementPolicy' object/,
  });
});

t.test('a list answer without nextStart is the last page', async (t) => {
  const { client, requests } = clientAnswering(jsonAnswer({ webhooks: [{ id: 'a' }] }));
  t.same(await client.webhooks.list(GP), { webhooks: [{ id: 'a' }], nextStart: -1 });
  t.notOk(requests[0]!.form.has('start'), 'no page asked: start and num are not sent');
});

t.test('listAll stops with an error when nextStart does not move forward, instead of looping', async (t) => {
  const { client, requests } = clientAnswering(
    jsonAnswer({ webhooks: [{ id: 'a' }], nextStart: 26 }),
    jsonAnswer({ webhooks: [{ id: 'b' }], nextStart: 26 }),
  );
  await t.rejects(client.webhooks.listAll(GP), {
    code: 'GEOHOOK_ERR_ADMIN_API',
    message: /the answer has no nextStart after 26 \(got 26\)$/,
  });
  t.equal(requests.length, 2);
});

t.test('a findServices filter that is not a string is refused before any request', async (t) => {
  const { client, requests } = clientAnswering();
  await t.rejects(client.findServices({ serviceType: 7 as unknown as string }), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: 'filters.serviceType: must be a string',
  });
  t.equal(requests.length, 0);
});

t.test('a generateToken answer without a token is an error; one without expires lasts the lifetime asked for', async (t) => {
  const tokenUrl = 'http://gis.example/arcgis/sharing/rest/generateToken';
  await t.rejects(
    generateToken({ tokenUrl, username: 'u', password: 'secret-password', fetch: recordingFetch([jsonAnswer({ expires: 1 })]).fetch }),
    {
      code: 'GEOHOOK_ERR_ADMIN_API',
      message: '/arcgis/sharing/rest/generateToken: the answer carries no token',
    },
  );
  const before = Date.now();
  const issued = await generateToken({
    tokenUrl,
    username: 'u',
    password: 'p',
    expirationMinutes: 2,
    fetch: recordingFetch([jsonAnswer({ token: 'abc' })]).fetch,
  });
  t.equal(issued.token, 'abc');
  t.ok(issued.expires >= before + 120_000 && issued.expires <= Date.now() + 120_000);
  const classic = await generateToken({
    tokenUrl,
    username: 'u',
    password: 'p',
    fetch: recordingFetch([jsonAnswer({ token: 'abc', expires: '13472658353687' })]).fetch,
  });
  t.equal(classic.expires, 13472658353687, 'classic ArcGIS Server sends expires as a string');
});
