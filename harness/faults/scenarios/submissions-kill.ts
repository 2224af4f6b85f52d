import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeTempDir, removeTempDir } from '../../cleanup.js';
import { emulatorToken, submitInspection, type SubmissionAnswer } from '../../emulator-control.js';
import { ChangeEventsProbe, readChangeEvents } from '../change-events.js';
import { DeleteOnRead } from '../delete-on-read.js';
import { listenEmulator } from '../fault-emulator.js';
import type { FaultRow } from '../fault-row.js';
import { since, type ScenarioOptions } from '../scenario.js';
import { startStack, withStack } from '../stack.js';
import { judgeSubmissions, type SubmissionVerdict } from '../submission-audit.js';
import { changesEnv } from './changes-kill.js';

const FAULT = 'submissions-kill';
const PARCELS = 'Hosted/Parcels.FeatureServer';
/** Submissions made per second, as field crews might at peak. */
const SUBMISSIONS_PER_SECOND = 10;
/** Each submission: a parcel, two inspections, two photos on the parcel and one on each inspection. */
const SUBMISSION = { related: 2, photos: [{}, {}, { on: 0 }, { on: 1 }], photoBytes: 1024 };
/** The change events of a submission: a change.created per feature (parcel, two inspections) and its change.submission. */
const EVENTS_PER_SUBMISSION = 4;
/**
 * Every this many submissions, one has its first photo, and its second inspection (with that one's photo), deleted
 * as geohook first reads their bytes: it finds them gone (404).
 */
const DELETE_EVERY = 10;
/** How long the killed receiver stays dead before it is started again. */
const DOWN_MS = 1000;
/** The longest wait, after the last submission, for every one to be written (a killed resolver's lock lapses in 10 to 15 s). */
const SETTLE_TIMEOUT_MS = 180_000;

/**
 * `submissions-kill`: geohook follows Parcels with photos in its events (`attachments: "metadata"`, the default
 * window) and the emulator as its portal; `submissions` inspections (a parcel, two inspections, four photos) are
 * submitted through the emulator as Survey123 does, at 10 a second, every other one followed by its Survey123
 * webhook. At a third and at two thirds of the submissions, `geohook serve` is SIGKILLed and started again a second
 * later (submissions go on meanwhile: their webhooks find no receiver, the server's deliveries are backfilled).
 * Every tenth submission has its first photo, and its second inspection, deleted through the JS client as geohook
 * first reads their bytes. Every submission must then be exactly one `change.submission` with all its parts: 0 lost,
 * 0 doubled (a photo deleted may be missing, found gone when it was read).
 */
export async function runSubmissionsKill(options: ScenarioOptions): Promise<FaultRow> {
  const { log, submissions: total } = options;
  let deletions: DeleteOnRead | undefined;
  const { app: emulator, url } = await listenEmulator(async (request) => deletions?.before(request));
  const configDir = makeTempDir(`${FAULT}-config`);
  try {
    const config = join(configDir, 'geohook.json');
    writeFileSync(config, JSON.stringify({ changes: { [PARCELS]: { attachments: 'metadata' } } }));
    const env = { ...changesEnv(url), PORTAL_URL: `${url}/arcgis`, GEOHOOK_CONFIG: config };
    const armed = new DeleteOnRead(`${url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`, await emulatorToken(url));
    deletions = armed;
    return await withStack(await startStack(FAULT, 'fast', { env }), options.keepDirs, async (stack) => {
      const probe = new ChangeEventsProbe(stack.redis.url, stack.prefix);
      try {
        const survey123Url = `${stack.receiver.url}/webhooks/default/survey123`;
        const made: SubmissionAnswer[] = [];
        const refused: string[] = [];
        let answered = 0;
        const kills = [Math.ceil(total / 3), Math.ceil((2 * total) / 3)];
        const writtenAtKills: number[] = [];
        const answeredAtKills: number[] = [];
        const startMs = performance.now();
        const striking = (async () => {
          for (const at of kills) {
            // Mid-run: once some change events came since the last kill, while submissions are still being made.
            const before = writtenAtKills.at(-1) ?? 0;
            while (answered < at || (await probe.written()) <= before) await sleep(5);
            answeredAtKills.push(answered);
            writtenAtKills.push(await probe.written());
            await stack.receiver.kill();
            log(
              `${FAULT}: geohook serve SIGKILLed after ${answered} of ${total} submissions, ${writtenAtKills.at(-1)} change events written`,
            );
            await sleep(DOWN_MS);
            await stack.receiver.start();
          }
        })();
        const submitting: Promise<void>[] = [];
        for (let n = 0; n < total; n += 1) {
          await sleep(Math.max(0, (n * 1000) / SUBMISSIONS_PER_SECOND - since(startMs)));
          const request = { ...SUBMISSION, ...(n % 2 === 0 ? { webhookUrl: survey123Url } : {}) };
          submitting.push(
            submitInspection(url, PARCELS, request).then(
              (answer) => {
                answered += 1;
                if (answer.serverGen === null) refused.push(`submission ${n}: the server applied nothing`);
                else made.push(answer);
                if (answer.serverGen !== null && n % DELETE_EVERY === DELETE_EVERY / 2) armed.arm(answer);
              },
              (err: unknown) => {
                answered += 1;
                refused.push(`submission ${n}: ${(err as Error).message}`);
              },
            ),
          );
        }
        await Promise.all(submitting);
        await striking;
        const submittedMs = since(startMs);
        log(`${FAULT}: ${made.length} submissions made in ${(submittedMs / 1000).toFixed(1)} s`);
        const { verdict, waitedMs } = await settle(probe, stack.redis.url, stack.prefix, made, armed.deleted);
        const problems: string[] = refused.slice(0, 5);
        if (refused.length > 0) problems.push(`${refused.length} submissions refused by the emulator`);
        if (verdict.lost > 0)
          problems.push(`${verdict.lost} submissions have no change.submission ${Math.round(waitedMs / 1000)} s after the last`);
        if (verdict.duplicated > 0) problems.push(`${verdict.duplicated} change.submission events beyond one per submission`);
        if (verdict.incomplete > 0)
          problems.push(
            `${verdict.incomplete} change.submission events lack a part or hold another's (${verdict.incompleteBySurvey123} closed by Survey123; ` +
              `${verdict.missingRelated} related rows and ${verdict.missingPhotos} photos missing)`,
          );
        if (verdict.strangers > 0) problems.push(`${verdict.strangers} change.submission events of no submission made`);
        if (writtenAtKills.some((written) => written >= EVENTS_PER_SUBMISSION * made.length))
          problems.push(`a kill came too late: every change event was written already (${writtenAtKills.join(' and ')})`);
        return {
          fault: FAULT,
          durability: 'fast',
          sent: total,
          acknowledged: made.length,
          found: verdict.found,
          lost: verdict.lost,
          duplicated: verdict.duplicated,
          zeroLossExpected: true,
          writtenAtFault: writtenAtKills[0] ?? 0,
          notes: [
            `${total} submissions at ${SUBMISSIONS_PER_SECOND}/s in ${(submittedMs / 1000).toFixed(1)} s`,
            `geohook serve SIGKILLed after ${answeredAtKills.join(' and ')} submissions, ${writtenAtKills.join(' and ')} change events written`,
            `${verdict.closedBySurvey123} closed by their Survey123 webhook, ${verdict.found - verdict.closedBySurvey123} by their window`,
            `${verdict.incomplete} incomplete`,
            `${armed.made} photos or inspections deleted as geohook read their bytes, ${verdict.goneMissing} parts left out of their submission`,
            `all written ${(waitedMs / 1000).toFixed(1)} s after the last`,
          ].join('; '),
          problems,
        };
      } finally {
        await probe.close();
      }
    });
  } finally {
    await emulator.close();
    removeTempDir(configDir);
  }
}

/**
 * Waits until no range is resolving and no submission is open (twice in a row, 500 ms apart), then judges the
 * change events; again while a submission made has none, until {@link SETTLE_TIMEOUT_MS} (a delivery the kill cut
 * short is backfilled).
 */
async function settle(
  probe: ChangeEventsProbe,
  redisUrl: string,
  prefix: string,
  made: readonly SubmissionAnswer[],
  deleted: ReadonlySet<string>,
): Promise<{ verdict: SubmissionVerdict; waitedMs: number }> {
  const startedAtMs = Date.now();
  let idlePolls = 0;
  for (;;) {
    const busy = (await probe.resolving()) || (await probe.submissionsOpen()) > 0;
    idlePolls = busy ? 0 : idlePolls + 1;
    const waitedMs = Date.now() - startedAtMs;
    if (idlePolls >= 2 || waitedMs > SETTLE_TIMEOUT_MS) {
      const verdict = judgeSubmissions((await readChangeEvents(redisUrl, prefix)).values(), made, deleted);
      if (verdict.lost === 0 || waitedMs > SETTLE_TIMEOUT_MS) return { verdict, waitedMs };
      idlePolls = 0;
    }
    await sleep(500);
  }
}
