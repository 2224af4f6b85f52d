import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { addAttachment, applyEdits, deleteAttachments, updateAttachment } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import pg from 'pg';
import { startPostgresServer, type PostgresServer } from '../../../src/embedded/postgres-server.js';
import { bulkAdd, emulatorAdminEnv } from '../../emulator-control.js';
import { attachmentDifferences, mirroredAttachments, serverAttachments, type AttachmentDifference } from '../attachment-audit.js';
import { listenEmulator } from '../fault-emulator.js';
import type { FaultRow } from '../fault-row.js';
import { layerGenerations, layerResource, mirrorDifferences, mirrorGenerations, queryFeatures } from '../mirror-audit.js';
import { since, type ScenarioOptions } from '../scenario.js';
import { startStack, withStack, type Stack } from '../stack.js';

const PARCELS = 'Hosted/Parcels.FeatureServer';
/** Edits of one `applyEdits` call. */
const EDITS_PER_CALL = 10;
/** Attachment edits after each `applyEdits` call, each a call of its own. */
const ATTACHMENT_EDITS_PER_CALL = 3;
/** Inspections (table 1) whose attachments are edited beside the parcels'. */
const INSPECTIONS = 100;
/** Attachments added before geohook starts: its initial copy has them. */
const SEEDED_ATTACHMENTS = 40;
/** The layers whose attachments are mirrored, with their tables. */
const LAYERS = [
  { id: 0, table: 'parcels_parcels' },
  { id: 1, table: 'parcels_inspections' },
] as const;
/** The longest wait, after the last fault, for every table to reach its layer's generation. */
const CATCH_UP_TIMEOUT_MS = 120_000;

/** A seeded generator (mulberry32): the same edits on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const square = (x: number, y: number) => ({
  rings: [
    [
      [x, y],
      [x, y + 40],
      [x + 40, y + 40],
      [x + 40, y],
      [x, y],
    ],
  ],
  spatialReference: { wkid: 102100 },
});

/** The emulator's admin API, with a token of `user`. */
async function admin(url: string, path: string, params: Record<string, string>, user = 'admin'): Promise<Record<string, unknown>> {
  const tokenAnswer = await fetch(`${url}/arcgis/sharing/rest/generateToken`, {
    method: 'POST',
    body: new URLSearchParams({ username: user, password: `${user}.pass`, f: 'json' }),
  });
  const { token } = (await tokenAnswer.json()) as { token: string };
  const answer = await fetch(`${url}/arcgis/admin/${path}`, { method: 'POST', body: new URLSearchParams({ f: 'json', token, ...params }) });
  return (await answer.json()) as Record<string, unknown>;
}

const webhookActive = async (url: string): Promise<boolean | undefined> =>
  ((await admin(url, `services/${PARCELS}/webhooks`, { num: '100' })).webhooks as { active: boolean }[] | undefined)?.[0]?.active;

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`mirror-kill: ${what} not within ${timeoutMs} ms`);
    await sleep(2);
  }
}

/** Whether a mirror transaction holds its advisory lock now: a sync is under way. */
const syncing = async (pool: pg.Pool): Promise<boolean> =>
  ((await pool.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted")).rowCount ?? 0) > 0;

/** An attachment the editor made and has not deleted. */
interface KnownAttachment {
  layerId: number;
  featureId: number;
  attachmentId: number;
}

/**
 * Random edits of Parcels with the real JS client, `EDITS_PER_CALL` a call: adds (a square somewhere), updates
 * (attributes, sometimes the geometry) and deletes of live features. Each call is followed by
 * `ATTACHMENT_EDITS_PER_CALL` attachment edits of parcels and inspections (`addAttachment`, `updateAttachment` with
 * other bytes and another name, `deleteAttachments`, or `applyEdits` deleting a feature that has attachments). Counts
 * the edits the server applied.
 */
class Editor {
  readonly #next = random(39);
  readonly #live: number[];
  readonly #inspections: number[];
  readonly #url: string;
  readonly #authentication: ApiKeyManager;
  #attachments: KnownAttachment[] = [];
  applied = 0;
  made = 0;
  /** Attachment edits by kind: added, replaced, deleted, parent deleted; `applied`: those the server applied. */
  readonly attachmentEdits = { add: 0, update: 0, delete: 0, parent: 0, applied: 0 };

  constructor(url: string, token: string, live: number[], inspections: number[]) {
    this.#url = `${url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
    this.#authentication = ApiKeyManager.fromKey(token);
    this.#live = live;
    this.#inspections = inspections;
  }

  async call(edits = EDITS_PER_CALL): Promise<void> {
    const pick = (): number => this.#live[Math.floor(this.#next() * this.#live.length)]!;
    const adds: { attributes: Record<string, unknown>; geometry: never }[] = [];
    const updates: { attributes: Record<string, unknown>; geometry?: never }[] = [];
    const deletes = new Set<number>();
    for (let index = 0; index < edits; index += 1) {
      const roll = this.#next();
      const x = Math.round(this.#next() * 100_000);
      if (roll < 0.4)
        adds.push({ attributes: { parcel_id: `F-${this.made + index}`, status: 'Open' }, geometry: square(x, x / 2) as never });
      else if (roll < 0.8) {
        const objectid = pick();
        if (deletes.has(objectid) || updates.some((update) => update.attributes.objectid === objectid)) continue;
        const attributes = { objectid, owner: `owner ${Math.floor(this.#next() * 1e6)}`, area_sqm: this.#next() * 1000 };
        updates.push(roll < 0.6 ? { attributes } : { attributes, geometry: square(x, x) as never });
      } else {
        const objectid = pick();
        if (!updates.some((update) => update.attributes.objectid === objectid)) deletes.add(objectid);
      }
    }
    this.made += adds.length + updates.length + deletes.size;
    const answer = await applyEdits({ url: `${this.#url}/0`, authentication: this.#authentication, adds, updates, deletes: [...deletes] });
    for (const result of answer.addResults) if (result.success) this.#live.push(result.objectId);
    for (const result of answer.deleteResults) if (result.success) this.#deleted(0, result.objectId);
    this.applied += [...answer.addResults, ...answer.updateResults, ...answer.deleteResults].filter((result) => result.success).length;
    for (let index = 0; index < ATTACHMENT_EDITS_PER_CALL; index += 1) await this.editAttachment();
  }

  /** A feature deleted: gone from the live ones, its attachments with it. */
  #deleted(layerId: number, featureId: number): void {
    const live = layerId === 0 ? this.#live : this.#inspections;
    const at = live.indexOf(featureId);
    if (at >= 0) live.splice(at, 1);
    this.#attachments = this.#attachments.filter((known) => known.layerId !== layerId || known.featureId !== featureId);
  }

  /** One attachment edit (`add` while there is none to change); an edit the server refuses is not counted applied. */
  async editAttachment(only?: 'add'): Promise<void> {
    const roll = only === 'add' ? 0 : this.#next();
    const name = `photo-${this.made}-${Object.values(this.attachmentEdits).reduce((sum, count) => sum + count, 0)}`;
    // Bytes of a size and content of their own: each replacement has another SHA-256.
    const attachment = new File([Buffer.from(name.repeat(1 + Math.floor(this.#next() * 50)))], `${name}.jpg`, { type: 'image/jpeg' });
    const known = this.#attachments[Math.floor(this.#next() * this.#attachments.length)];
    const kind = roll < 0.5 || known === undefined ? 'add' : roll < 0.75 ? 'update' : roll < 0.9 ? 'delete' : 'parent';
    this.attachmentEdits[kind] += 1;
    const applied = kind === 'add' ? await this.#addAttachment(attachment) : await this.#changeAttachment(kind, known!, attachment);
    if (applied) this.attachmentEdits.applied += 1;
  }

  /** Adds `attachment` to a live parcel or inspection; resolves to whether the server applied it. */
  async #addAttachment(attachment: File): Promise<boolean> {
    const layerId = this.#next() < 0.7 || this.#inspections.length === 0 ? 0 : 1;
    const live = layerId === 0 ? this.#live : this.#inspections;
    const featureId = live[Math.floor(this.#next() * live.length)]!;
    const url = `${this.#url}/${layerId}`;
    const { addAttachmentResult } = await addAttachment({ url, authentication: this.#authentication, featureId, attachment });
    if (addAttachmentResult.success) this.#attachments.push({ layerId, featureId, attachmentId: addAttachmentResult.objectId });
    return addAttachmentResult.success;
  }

  /** Replaces `known` with `attachment`, deletes it, or deletes its feature; resolves to whether the server applied it. */
  async #changeAttachment(kind: 'update' | 'delete' | 'parent', known: KnownAttachment, attachment: File): Promise<boolean> {
    const { layerId, featureId, attachmentId } = known;
    const options = { url: `${this.#url}/${layerId}`, authentication: this.#authentication, featureId };
    switch (kind) {
      case 'update':
        return (await updateAttachment({ ...options, attachmentId, attachment })).updateAttachmentResult.success;
      case 'delete': {
        this.#attachments.splice(this.#attachments.indexOf(known), 1);
        const { deleteAttachmentResults } = await deleteAttachments({ ...options, attachmentIds: [attachmentId] });
        return deleteAttachmentResults[0]?.success === true;
      }
      case 'parent': {
        const { deleteResults } = await applyEdits({ url: options.url, authentication: options.authentication, deletes: [featureId] });
        const applied = deleteResults[0]?.success === true;
        if (applied) this.#deleted(layerId, featureId);
        return applied;
      }
    }
  }
}

/**
 * The PostGIS mirror's acceptance (issue 39): Parcels with `mirrorFeatures` features mirrored by `geohook serve`
 * into a PostgreSQL of its own, then `mirrorEdits` random adds, updates and deletes made with the JS client while:
 * the serve process is SIGKILLed mid-sync (a mirror transaction holding its lock) twice, stopped long enough for
 * the server to deactivate its webhook (the edits meanwhile backfilled once it is back), and PostgreSQL is
 * restarted. Attachments are on for Parcels (`attachments: "metadata"`, issue 55): `SEEDED_ATTACHMENTS` photos are
 * there before geohook starts, and each call of edits is followed by attachment adds, replacements, deletes and
 * deletes of features that have attachments, on parcels and inspections. Afterwards every row must equal the layer's
 * `query` (attributes, `ST_Equals` geometry), none missing or extra, each layer's attachments table must equal its
 * `queryAttachments` (metadata and the SHA-256 of the bytes), and `mirror_state` must hold the layers' generation.
 */
export async function runMirrorKill(options: ScenarioOptions): Promise<FaultRow> {
  const { log, mirrorFeatures, mirrorEdits } = options;
  const fault = 'mirror-kill';
  const { app: emulator, url } = await listenEmulator();
  const pgDir = mkdtempSync(join(tmpdir(), 'geohook-faults-pg-'));
  let postgres: PostgresServer | undefined;
  try {
    postgres = await startPostgresServer({ dir: pgDir });
    const database = postgres;
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    pool.on('error', () => undefined);
    await admin(url, 'services/webhooks/settings', { notificationAttempts: '1', numberOfFailures: '3', daysInPast: '1' }, 'orgadmin');
    await bulkAdd(url, PARCELS, mirrorFeatures);
    await bulkAdd(url, PARCELS, INSPECTIONS, 1);
    const token = (await (
      await fetch(`${url}/arcgis/sharing/rest/generateToken`, {
        method: 'POST',
        body: new URLSearchParams({ username: 'admin', password: 'admin.pass', f: 'json' }),
      })
    ).json()) as { token: string };
    const serviceUrl = `${url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
    const idsOf = async (layerId: number): Promise<number[]> =>
      (await queryFeatures(serviceUrl, layerId, token.token, { outFields: 'objectid', returnGeometry: 'false' })).map(
        (feature) => feature.attributes.objectid as number,
      );
    const editor = new Editor(url, token.token, await idsOf(0), await idsOf(1));
    for (let index = 0; index < SEEDED_ATTACHMENTS; index += 1) await editor.editAttachment('add');
    const configFile = join(pgDir, 'geohook.json');
    // Attachments on for Parcels: each of its layers gets an attachments table.
    writeFileSync(
      configFile,
      JSON.stringify({ registration: { intervalSeconds: 1 }, changes: { [PARCELS]: { attachments: 'metadata' } } }),
    );
    const env = {
      ...emulatorAdminEnv(url),
      REGISTER: PARCELS,
      MIRROR: PARCELS,
      MIRROR_DATABASE_URL: database.url,
      GEOHOOK_CONFIG: configFile,
      LOG_LEVEL: 'info',
    };
    const startMs = performance.now();
    return await withStack(await startStack(fault, 'fast', { env }), options.keepDirs, async (stack: Stack) => {
      try {
        await until('the initial copy', async () => (await mirrorGenerations(pool, 'geohook', PARCELS)).size === 2, 120_000);
        log(`${fault}: ${mirrorFeatures} parcels copied ${since(startMs)} ms after the start`);
        const notes: string[] = [];
        let midSyncKills = 0;
        const killMidSync = async (which: string): Promise<void> => {
          // A large call gives the mirror a range to apply; it is killed while its transaction holds the lock.
          await editor.call(EDITS_PER_CALL * 5);
          const seen = await until('a mirror transaction', () => syncing(pool), 10_000).then(
            () => true,
            () => false,
          );
          await stack.receiver.kill();
          if (seen) midSyncKills += 1;
          notes.push(`${which} kill ${seen ? 'mid-sync' : 'NOT mid-sync'} after ${editor.made} edits`);
          await sleep(300);
          await stack.receiver.start();
        };
        const outage = async (): Promise<void> => {
          await stack.receiver.stop();
          const stoppedAt = editor.made;
          while ((await webhookActive(url)) !== false) await editor.call();
          await editor.call();
          notes.push(`receiver down for ${editor.made - stoppedAt} edits, its webhook deactivated`);
          await stack.receiver.start();
          await until('the webhook active again', async () => (await webhookActive(url)) === true, 60_000);
        };
        const restartPostgres = async (): Promise<void> => {
          await database.stop('fast');
          await editor.call();
          await sleep(500);
          await database.start();
          notes.push(`PostgreSQL restarted after ${editor.made} edits`);
        };
        // Each fault once, when the edits made pass its share of them; all of them, however few the edits.
        const faults: [number, () => Promise<void>][] = [
          [0.2, () => killMidSync('first')],
          [0.4, outage],
          [0.6, restartPostgres],
          [0.8, () => killMidSync('second')],
        ];
        while (editor.made < mirrorEdits || faults.length > 0) {
          if (faults[0] !== undefined && editor.made >= faults[0][0] * mirrorEdits) await faults.shift()![1]();
          else await editor.call();
        }
        const caughtUpAt = performance.now();
        const done = async (): Promise<boolean> => {
          const [server, mirror] = await Promise.all([
            layerGenerations(serviceUrl, token.token),
            mirrorGenerations(pool, 'geohook', PARCELS),
          ]);
          const newest = Math.max(...server.values());
          return mirror.size === server.size && [...mirror.values()].every((gen) => gen === newest);
        };
        const caughtUp = await until('the mirror at the layers’ generation', done, CATCH_UP_TIMEOUT_MS).then(
          () => true,
          () => false,
        );
        const client = await pool.connect();
        let differences;
        const attachments = { mirrored: 0, server: 0, differences: [] as (AttachmentDifference & { layer: number })[] };
        try {
          for (const { id, table } of LAYERS) {
            const [mirrored, server] = [
              await mirroredAttachments(client, 'geohook', table),
              await serverAttachments(serviceUrl, id, token.token),
            ];
            attachments.mirrored += mirrored.length;
            attachments.server += server.length;
            attachments.differences.push(...attachmentDifferences(mirrored, server).map((difference) => ({ ...difference, layer: id })));
          }
          differences = [
            ...(await mirrorDifferences(
              client,
              { schema: 'geohook', table: 'parcels_parcels', layer: await layerResource(serviceUrl, 0, token.token) },
              await queryFeatures(serviceUrl, 0, token.token),
            )),
            ...(await mirrorDifferences(
              client,
              { schema: 'geohook', table: 'parcels_inspections', layer: await layerResource(serviceUrl, 1, token.token) },
              await queryFeatures(serviceUrl, 1, token.token),
            )),
          ];
        } finally {
          client.release();
        }
        const rows = Number((await pool.query<{ count: string }>('SELECT count(*) FROM geohook.parcels_parcels')).rows[0]!.count);
        await pool.end();
        const count = (kind: string): number => differences.filter((difference) => difference.kind === kind).length;
        const attachmentCount = (kind: AttachmentDifference['kind']): number =>
          attachments.differences.filter((difference) => difference.kind === kind).length;
        const { add, update, delete: deleted, parent, applied } = editor.attachmentEdits;
        const problems: string[] = [];
        if (!caughtUp) problems.push(`mirror_state not at the layers' generation ${CATCH_UP_TIMEOUT_MS / 1000} s after the last edit`);
        if (midSyncKills < 2) problems.push(`${2 - midSyncKills} of the two kills came when no mirror transaction was under way`);
        if (differences.length > 0) problems.push(`rows differ from the layer: ${JSON.stringify(differences.slice(0, 10))}`);
        if (attachments.differences.length > 0)
          problems.push(`attachments differ from queryAttachments: ${JSON.stringify(attachments.differences.slice(0, 10))}`);
        if (editor.applied === 0) problems.push('no edit was applied');
        if (update === 0 || deleted === 0 || parent === 0) problems.push('an attachment edit of some kind was never made');
        return {
          fault,
          durability: 'fast',
          sent: editor.made + add + update + deleted + parent,
          acknowledged: editor.applied + applied,
          found: rows + attachments.mirrored,
          lost: count('missing') + count('changed') + attachmentCount('missing') + attachmentCount('changed') + attachmentCount('hash'),
          duplicated: count('extra') + attachmentCount('extra'),
          zeroLossExpected: true,
          notes: [
            `${mirrorFeatures} parcels mirrored`,
            ...notes,
            `caught up ${((performance.now() - caughtUpAt) / 1000).toFixed(1)} s after the last edit`,
            `${rows} rows, ${count('changed')} changed`,
            `attachments: ${SEEDED_ATTACHMENTS} before the start, then ${add - SEEDED_ATTACHMENTS} added, ${update} replaced, ${deleted} deleted, ` +
              `${parent} features with attachments deleted (${applied} applied); ${attachments.mirrored} mirrored of ` +
              `${attachments.server} queryAttachments lists, ${attachmentCount('missing')} missing, ${attachmentCount('extra')} extra, ` +
              `${attachmentCount('hash')} other SHA-256, ${attachmentCount('changed')} other metadata`,
          ].join('; '),
          problems,
        };
      } finally {
        await pool.end().catch(() => undefined);
      }
    });
  } finally {
    await postgres?.stop('immediate').catch(() => undefined);
    rmSync(pgDir, { recursive: true, force: true });
    await emulator.close();
  }
}
