import { deleteAttachments, deleteFeatures } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import type { SubmissionAnswer } from '../emulator-control.js';

/** A read of an attachment's bytes: `…/FeatureServer/<layer>/<objectId>/attachments/<attachmentId>`. */
const BYTES_READ = /^(?:GET|POST) [^?]*\/FeatureServer\/(\d+\/\d+\/attachments\/\d+)(?:\?|$)/;

/**
 * Deletes photos of submissions, or the features holding them, at the moment geohook first reads their bytes:
 * after it read their range, before it hashed them, so that it finds them gone (404). {@link before} is the
 * emulator's hook; {@link arm} picks a submission's targets.
 */
export class DeleteOnRead {
  /** The SHA-256 of the photos, and GlobalIDs of the rows, deleted or to be. */
  readonly deleted = new Set<string>();
  /** Deletions made. */
  made = 0;
  readonly #serviceUrl: string;
  readonly #authentication: ApiKeyManager;
  readonly #armed = new Map<string, () => Promise<unknown>>();
  readonly #running = new Map<string, Promise<unknown>>();

  /** `serviceUrl`: the feature service's REST URL; `token`: one allowed to edit it. */
  constructor(serviceUrl: string, token: string) {
    this.#serviceUrl = serviceUrl;
    this.#authentication = ApiKeyManager.fromKey(token);
  }

  /** Arms a submission: its first photo deleted, and its second related row (with its photos) deleted. */
  arm(answer: SubmissionAnswer): void {
    const [photo] = answer.attachments;
    const row = answer.related[1];
    const url = (layerId: number) => `${this.#serviceUrl}/${layerId}`;
    const authentication = this.#authentication;
    if (photo !== undefined) {
      const parentId = answer.related.find((related) => related.globalId === photo.parentGlobalId)?.objectId ?? answer.parent.objectId;
      this.deleted.add(photo.sha256);
      this.#armed.set(`${photo.layerId}/${parentId}/attachments/${photo.id}`, () =>
        deleteAttachments({ url: url(photo.layerId), authentication, featureId: parentId, attachmentIds: [photo.id] }),
      );
    }
    if (row === undefined) return;
    const onRow = answer.attachments.filter((entry) => entry.parentGlobalId === row.globalId);
    this.deleted.add(row.globalId);
    for (const entry of onRow) {
      this.deleted.add(entry.sha256);
      this.#armed.set(`${row.layerId}/${row.objectId}/attachments/${entry.id}`, () =>
        deleteFeatures({ url: url(row.layerId), authentication, objectIds: [row.objectId] }),
      );
    }
  }

  /** The emulator's hook: before answering the first read of an armed attachment's bytes, its deletion is made. */
  async before(request: string): Promise<void> {
    const target = BYTES_READ.exec(request)?.[1];
    if (target === undefined) return;
    const deletion = this.#armed.get(target);
    if (deletion === undefined) return;
    if (!this.#running.has(target)) {
      this.#running.set(target, deletion());
      this.made += 1;
    }
    await this.#running.get(target)!.catch(() => undefined);
  }
}
