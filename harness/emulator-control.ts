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
