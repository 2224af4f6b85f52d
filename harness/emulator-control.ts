/** The variables that point geohook at an emulator's admin API, signed in as its `admin` user. */
export function emulatorAdminEnv(emulatorRoot: string): Record<string, string> {
  return { ADMIN_URL: `${emulatorRoot}/arcgis/admin`, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
}

/** What the emulator's `bulk` control answers. */
export interface BulkAnswer {
  /** Features added. */
  count: number;
  /** The one generation they were added in. */
  serverGen: number;
  /** The webhook deliveries the bulk fired. */
  deliveries: string[];
}

/**
 * Adds `count` features to a layer of `service` (`folder/name.FeatureServer`) in one generation, with the emulator's
 * `bulk` control; throws unless it answers 200.
 */
export async function bulkAdd(emulatorRoot: string, service: string, count: number, layerId = 0): Promise<BulkAnswer> {
  const response = await fetch(`${emulatorRoot}/emulator/services/${service}/bulk`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ layerId, count }),
  });
  const answer = (await response.json()) as BulkAnswer;
  if (response.status !== 200) throw new Error(`the bulk of ${count} adds answered HTTP ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** A feature a submission made, as the emulator's `submissions` control answers it. */
export interface SubmittedFeature {
  layerId: number;
  objectId: number;
  globalId: string;
}

/** What the emulator's `submissions` control answers: the parent, its related rows and photos, the Survey123 webhook's answer. */
export interface SubmissionAnswer {
  /** The generation of its one `applyEdits`; null when the server applied nothing. */
  serverGen: number | null;
  parent: SubmittedFeature;
  related: SubmittedFeature[];
  attachments: { layerId: number; id: number; parentGlobalId: string; sha256: string }[];
  webhook?: { url: string; status?: number; error?: string };
}

/**
 * Submits one inspection to a layer of `service` (`folder/name.FeatureServer`) the way Survey123 does, with the
 * emulator's `submissions` control (`request`: `related`, `photos`, `photoBytes`, `webhookUrl`…); throws unless it
 * answers 200.
 */
export async function submitInspection(emulatorRoot: string, service: string, request: Record<string, unknown>): Promise<SubmissionAnswer> {
  const response = await fetch(`${emulatorRoot}/emulator/services/${service}/submissions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  const answer = (await response.json()) as SubmissionAnswer;
  if (response.status !== 200) throw new Error(`the submission answered HTTP ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** A token of the emulator's built-in `user` (`admin` unless told), from its `generateToken`. */
export async function emulatorToken(emulatorRoot: string, user = 'admin'): Promise<string> {
  const response = await fetch(`${emulatorRoot}/arcgis/sharing/rest/generateToken`, {
    method: 'POST',
    body: new URLSearchParams({ username: user, password: `${user}.pass`, f: 'json' }),
  });
  return ((await response.json()) as { token: string }).token;
}
