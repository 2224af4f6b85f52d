import { parseArgs } from 'node:util';
import { faultNames, type FaultName } from './fault-row.js';

/** What one run of the fault suite does. */
export interface FaultsOptions {
  /** Print one JSON array of rows on stdout (progress goes to stderr). */
  json: boolean;
  /** Deliveries per second of the load generator. */
  ratePerSecond: number;
  /** Requests in flight at most. */
  concurrency: number;
  /** Length of the load of the kill scenarios. */
  loadSeconds: number;
  /** How long Redis stays down in the outage scenarios. */
  outageSeconds: number;
  /** Features added in one generation in the change-event scenarios. */
  adds: number;
  /** Features added in one generation in the relay scenarios. */
  relayAdds: number;
  /** Parcels mirrored into PostGIS before the edits of the mirror fault. */
  mirrorFeatures: number;
  /** Random adds, updates and deletes made across the mirror fault's kills, outage and PostgreSQL restart. */
  mirrorEdits: number;
  /** Survey123 submissions made at 10 a second in the submissions fault. */
  submissions: number;
  /** Faults to run, in the suite's order. */
  only: FaultName[];
  /** Keep every scenario's directory (else only those of broken rows). */
  keepDirs: boolean;
}

export const usage = `npm run test:faults -- [options]

  --json                 print one JSON array of rows on stdout (progress goes to stderr)
  --rate N               deliveries per second of the load generator (default 500)
  --concurrency N        requests in flight at most (default 32)
  --load-seconds S       length of the load while a receiver or Redis is killed (default 6)
  --outage-seconds S     how long Redis, or the relays' endpoint, stays down in the outage faults (default 30)
  --adds N               features added in one generation in the change-event faults (default 20000)
  --relay-adds N         features added in one generation in the relay faults, each relayed to 2 routes (default 2000)
  --mirror-features N    parcels mirrored into PostGIS before the mirror fault's edits (default 10000)
  --mirror-edits N       random adds, updates and deletes of the mirror fault (default 1000)
  --submissions N        Survey123 submissions (a parcel, 2 inspections, 4 photos) at 10/s in the submissions fault (default 1000)
  --only LIST            comma-separated faults to run: ${faultNames.join(', ')} (default all)
  --keep                 keep every scenario's directory (Redis files, spool, receiver log)
  --help`;

function positive(name: string, text: string | undefined, fallback: number, integer: boolean): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`--${name}: a positive ${integer ? 'whole number' : 'number'}, got "${text}"`);
  }
  return value;
}

/** Parses the command line; throws an Error whose message names the bad flag. Undefined means `--help`. */
export function parseOptions(argv: readonly string[]): FaultsOptions | undefined {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      rate: { type: 'string' },
      concurrency: { type: 'string' },
      'load-seconds': { type: 'string' },
      'outage-seconds': { type: 'string' },
      adds: { type: 'string' },
      'relay-adds': { type: 'string' },
      'mirror-features': { type: 'string' },
      'mirror-edits': { type: 'string' },
      submissions: { type: 'string' },
      only: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  const only = values.only === undefined ? [...faultNames] : values.only.split(',').map((name) => name.trim());
  const unknown = only.filter((name) => !(faultNames as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`--only: ${unknown.join(', ')} unknown; one of ${faultNames.join(', ')}`);
  return {
    json: values.json,
    ratePerSecond: positive('rate', values.rate, 500, true),
    concurrency: positive('concurrency', values.concurrency, 32, true),
    loadSeconds: positive('load-seconds', values['load-seconds'], 6, false),
    outageSeconds: positive('outage-seconds', values['outage-seconds'], 30, false),
    adds: positive('adds', values.adds, 20_000, true),
    relayAdds: positive('relay-adds', values['relay-adds'], 2000, true),
    mirrorFeatures: positive('mirror-features', values['mirror-features'], 10_000, true),
    mirrorEdits: positive('mirror-edits', values['mirror-edits'], 1000, true),
    submissions: positive('submissions', values.submissions, 1000, true),
    only: faultNames.filter((name) => only.includes(name)),
    keepDirs: values.keep,
  };
}
