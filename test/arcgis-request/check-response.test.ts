import t from 'tap';
import { checkResponse, type AdminAnswer } from '../../src/arcgis-request/check-response.js';
import { AdminApiError, AdminAuthError } from '../../src/errors.js';

const url = 'http://gis.example/arcgis/admin/services/webhooks/settings';
const answer = (body: unknown, fields: Partial<AdminAnswer> = {}): AdminAnswer => ({
  status: 200,
  statusText: 'OK',
  body: typeof body === 'string' ? body : JSON.stringify(body),
  url,
  ...fields,
});
const thrown = (input: AdminAnswer): AdminApiError => {
  try {
    checkResponse(input);
  } catch (err) {
    if (err instanceof AdminApiError) return err;
    throw err;
  }
  throw new Error('checkResponse did not throw');
};

t.test('a successful answer is returned as its JSON object', async (t) => {
  t.same(checkResponse(answer({ status: 'success', notificationAttempts: 3 })), { status: 'success', notificationAttempts: 3 });
  t.same(checkResponse(answer({ webhooks: [], nextStart: -1 })), { webhooks: [], nextStart: -1 });
});

t.test('the admin error shape inside HTTP 200 is an AdminApiError with a one-line message', async (t) => {
  const err = thrown(answer({ status: 'error', messages: ["User 'viewer' is not\nauthorized.", 'Ask an admin.'], code: 403 }));
  t.notOk(err instanceof AdminAuthError);
  t.match(err, {
    code: 'GEOHOOK_ERR_ADMIN_API',
    statusCode: 502,
    serverCode: 403,
    url,
    messages: ["User 'viewer' is not authorized.", 'Ask an admin.'],
  });
  t.equal(err.message, "/arcgis/admin/services/webhooks/settings: User 'viewer' is not authorized. Ask an admin. (code 403)");
  t.match(err.response, { status: 'error', code: 403 });
});

t.test('the portal error shape inside HTTP 200 is an AdminApiError with message and details', async (t) => {
  const err = thrown(answer({ error: { code: 400, message: 'Unable to generate token.', details: ['Invalid username or password.'] } }));
  t.match(err, {
    code: 'GEOHOOK_ERR_ADMIN_API',
    serverCode: 400,
    messages: ['Unable to generate token.', 'Invalid username or password.'],
  });
  t.equal(err.message, '/arcgis/admin/services/webhooks/settings: Unable to generate token. Invalid username or password. (code 400)');
});

t.test('498 and 499 in either shape are AdminAuthError', async (t) => {
  const admin = thrown(answer({ status: 'error', messages: ['Invalid token.'], code: 498 }));
  t.ok(admin instanceof AdminAuthError);
  t.match(admin, { code: 'GEOHOOK_ERR_ADMIN_AUTH', statusCode: 401, serverCode: 498 });
  const portal = thrown(answer({ error: { code: 499, message: 'Token Required', messageCode: 'GWM_0003', details: ['Token Required'] } }));
  t.ok(portal instanceof AdminAuthError);
  t.same(portal.messages, ['Token Required'], 'a detail repeating the message is listed once');
  t.ok(thrown(answer({ status: 'error', messages: [], code: '498' })) instanceof AdminAuthError, 'a numeric string code too');
});

t.test('an admin error without a code is still an error', async (t) => {
  const err = thrown(answer({ status: 'error', messages: ['Something broke.'] }));
  t.equal(err.serverCode, undefined);
  t.equal(err.message, '/arcgis/admin/services/webhooks/settings: Something broke.');
  t.match(thrown(answer({ status: 'failed', message: 'Job failed.' })), { messages: ['Job failed.'] });
});

t.test('a non-2xx answer is an error, with the server message when its body has one', async (t) => {
  const html = thrown(answer('<html>Bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
  t.match(html, { serverCode: 502, messages: ['HTTP 502 Bad Gateway'], response: '<html>Bad gateway</html>' });
  const json = thrown(
    answer({ status: 'error', messages: ['Internal error.'], code: 500 }, { status: 500, statusText: 'Internal Server Error' }),
  );
  t.match(json, { serverCode: 500, messages: ['Internal error.'] });
  t.ok(thrown(answer('', { status: 498, statusText: '' })) instanceof AdminAuthError, 'HTTP 498 is an auth error');
});

t.test('a body that is not JSON, or not a JSON object, is an error', async (t) => {
  t.match(thrown(answer('<html>login</html>')), {
    serverCode: undefined,
    messages: ['the answer is not JSON (HTTP 200)'],
    response: '<html>login</html>',
  });
  t.match(thrown(answer('[1,2]')), { messages: ['the answer is not a JSON object'] });
  t.match(thrown(answer('null')), { messages: ['the answer is not a JSON object'] });
});

t.test('secrets never reach the error: not the message, the messages, the response nor the url', async (t) => {
  const token = 'tok-SECRET-123';
  const err = thrown(
    answer(
      { status: 'error', messages: [`Token '${token}' is invalid.`], code: 498, echo: { token } },
      { url: `${url}?token=${token}&x=1`, secrets: [token] },
    ),
  );
  for (const text of [err.message, err.url, JSON.stringify(err.messages), JSON.stringify(err.response), String(err.stack)]) {
    t.notMatch(text, token);
  }
  t.equal(err.message, "/arcgis/admin/services/webhooks/settings: Token '[redacted]' is invalid. (code 498)");
  t.equal(err.url, `${url}?x=1`);
});
