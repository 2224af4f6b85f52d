import t from 'tap';
import { backgroundReadiness } from '../../src/background/background-readiness.js';
import type { Background } from '../../src/background/start-background.js';
import { loadConfig } from '../../src/config/load-config.js';
import { configFile } from '../helpers/receiver.js';

const ADMIN = { ADMIN_URL: 'https://gis.example.com/arcgis/admin', ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };

/** The first reason of the checks, as /readyz takes it. */
const reasonOf = (checks: ReturnType<typeof backgroundReadiness>): string | undefined =>
  checks.map((check) => check()).find((reason) => reason !== undefined);

t.test('/readyz waits for the background parts the configuration has, each with its own reason once started', async (t) => {
  t.same(
    backgroundReadiness(loadConfig({}), () => undefined),
    [],
    'nothing to wait for without them',
  );

  const withSubscription = loadConfig({ GEOHOOK_CONFIG: configFile(t, { subscriptions: [{ name: 'permits', types: ['change.*'] }] }) });
  let background: Background | undefined;
  const subscriptions = backgroundReadiness(withSubscription, () => background);
  t.equal(reasonOf(subscriptions), 'subscriptions pending', 'a subscription of GEOHOOK_CONFIG: pending before the background');
  let made = false;
  background = { outputs: { notReadyReason: () => (made ? undefined : 'not made yet') } } as unknown as Background;
  t.equal(reasonOf(subscriptions), 'not made yet', 'then until the outputs made it');
  made = true;
  t.equal(reasonOf(subscriptions), undefined, 'then ready');

  background = undefined;
  const changes = backgroundReadiness(loadConfig({ ...ADMIN, CHANGES: 'Hosted/Parcels.FeatureServer' }), () => background);
  t.equal(reasonOf(changes), 'change events pending', 'CHANGES: pending before the background');
  background = { changes: { notReadyReason: () => 'reading Hosted/Parcels.FeatureServer' } } as unknown as Background;
  t.equal(reasonOf(changes), 'reading Hosted/Parcels.FeatureServer', 'then the change events say why');
});
