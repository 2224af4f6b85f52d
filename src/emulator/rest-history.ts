import type { ExtractJob, FeatureChange, FiredEdit, FiredJob } from './types.js';

/** Records kept of each kind (jobs, edits, extract jobs); the oldest are forgotten first. */
export const DEFAULT_HISTORY_SIZE = 10_000;

/** The list of `extractChanges` an edit of `changeType` lands in; undefined for attachment and schema changes. */
const changeOf: Readonly<Record<string, FeatureChange>> = {
  FeaturesCreated: 'adds',
  FeaturesUpdated: 'updates',
  FeaturesEdited: 'updates',
  FeaturesDeleted: 'deleteIds',
};

function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}

/**
 * What the emulator fired, so that the REST resources the payloads point to (`statusURL`, `changesUrl`)
 * answer with those very jobs and edits. Bounded: the last `max` of each kind are kept.
 */
export class FiredHistory {
  readonly #max: number;
  readonly #jobs = new Map<string, FiredJob>();
  readonly #edits: FiredEdit[] = [];
  readonly #extracts = new Map<string, ExtractJob>();
  /** The last object id used, by `service#layer`. */
  readonly #objectIds = new Map<string, number>();
  #lastWhen = Number.NEGATIVE_INFINITY;

  constructor(max = DEFAULT_HISTORY_SIZE) {
    this.#max = Math.max(1, max);
  }

  recordJob(job: FiredJob): void {
    remember(this.#jobs, job.jobId, job, this.#max);
  }

  job(jobId: string): FiredJob | undefined {
    return this.#jobs.get(jobId);
  }

  /**
   * Records an edit of `service` fired at `now`. Its `when` is strictly after the previous edit's, so each
   * edit has a generation of its own (`when + 1`) and a range from the generation before it to its own
   * selects it alone, as consecutive deliveries' `serverGens` chain on the product. A creation adds a feature
   * with the next object id; an update or deletion touches the layer's newest feature (object id 1 when the
   * layer has none yet).
   */
  recordEdit(service: string, changeType: string, layerId: number, now: number): FiredEdit {
    const when = Math.max(now, this.#lastWhen + 1);
    this.#lastWhen = when;
    const edit: FiredEdit = {
      service,
      layerId,
      changeType,
      when,
      serverGen: when + 1,
      serviceGenBefore: this.latestServiceGen(service) ?? when,
      layerGenBefore: this.latestGen(service, layerId) ?? when,
    };
    const change = changeOf[changeType];
    if (change !== undefined) {
      const layer = `${service}#${layerId}`;
      const last = this.#objectIds.get(layer) ?? 0;
      const objectId = change === 'adds' || last === 0 ? last + 1 : last;
      remember(this.#objectIds, layer, objectId, this.#max);
      edit.feature = { change, objectId };
    }
    this.#edits.push(edit);
    if (this.#edits.length > this.#max) this.#edits.splice(0, this.#edits.length - this.#max);
    return edit;
  }

  /** The edits of `service` with `from < serverGen <= to`, oldest first. */
  editsBetween(service: string, from: number, to: number): FiredEdit[] {
    return this.#edits.filter((edit) => edit.service === service && edit.serverGen > from && edit.serverGen <= to);
  }

  /** The server generation of the layer's newest edit kept, if any. */
  latestGen(service: string, layerId: number): number | undefined {
    return this.#edits.findLast((edit) => edit.service === service && edit.layerId === layerId)?.serverGen;
  }

  /** The server generation of the service's newest edit kept, if any. */
  latestServiceGen(service: string): number | undefined {
    return this.#edits.findLast((edit) => edit.service === service)?.serverGen;
  }

  /** The layers of `service` with edits kept, in order of their ids. */
  editedLayers(service: string): number[] {
    return [...new Set(this.#edits.filter((edit) => edit.service === service).map((edit) => edit.layerId))].sort((a, b) => a - b);
  }

  /**
   * A layer's `changeTrackingInfo.layerServerGens` entry at `now`: `serverGen` is its newest edit's generation,
   * or, for a layer without edits, a generation no later edit can have (`now`, or the last edit's `when`);
   * `minServerGen` is the generation before its oldest edit kept (what `extractChanges` can still return).
   */
  layerServerGen(service: string, layerId: number, now: number): { id: number; minServerGen: number; serverGen: number } {
    const serverGen = this.latestGen(service, layerId) ?? Math.max(now, this.#lastWhen);
    const oldest = this.#edits.find((edit) => edit.service === service && edit.layerId === layerId);
    return { id: layerId, minServerGen: oldest?.when ?? serverGen, serverGen };
  }

  recordExtract(job: ExtractJob): void {
    remember(this.#extracts, job.id, job, this.#max);
  }

  extract(id: string): ExtractJob | undefined {
    return this.#extracts.get(id);
  }
}
