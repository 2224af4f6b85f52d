import { createHash } from 'node:crypto';

/** An attachment as a layer keeps it: its metadata and its bytes. Frozen; an update replaces it. */
export interface Attachment {
  readonly id: number;
  readonly globalId: string;
  readonly parentObjectId: number;
  readonly parentGlobalId: string;
  readonly name: string;
  readonly contentType: string;
  readonly keywords: string;
  readonly data: Buffer;
}

/** What one edit did to one attachment. */
export type AttachmentOp = 'add' | 'update' | 'delete';

/** One attachment's change in one server generation: the attachment after it (for a delete, the one removed). */
export interface AttachmentChange {
  readonly serverGen: number;
  readonly op: AttachmentOp;
  readonly attachment: Attachment;
}

/** An attachment info, as `…/<oid>/attachments` and `queryAttachments` answer it. */
export interface AttachmentInfo {
  id: number;
  globalId: string;
  parentGlobalId: string;
  name: string;
  contentType: string;
  size: number;
  keywords: string;
  exifInfo: null;
}

export const infoOf = (attachment: Attachment): AttachmentInfo => ({
  id: attachment.id,
  globalId: attachment.globalId,
  parentGlobalId: attachment.parentGlobalId,
  name: attachment.name,
  contentType: attachment.contentType,
  size: attachment.data.length,
  keywords: attachment.keywords,
  exifInfo: null,
});

/** The SHA-256 of an attachment's bytes, hex: what tests compare downloads with. */
export const sha256Of = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * The attachments of one layer (a layer with `hasAttachments`): by id, by GlobalID and by parent, with the log of their
 * changes by server generation for `extractChanges`.
 */
export class LayerAttachments {
  readonly #byId = new Map<number, Attachment>();
  readonly #byGlobalId = new Map<string, number>();
  /** The ids of each feature's attachments, by its object id. */
  readonly #byParent = new Map<number, Set<number>>();
  readonly #log: AttachmentChange[] = [];
  /** The bytes of the attachments the log holds (its versions, current or not). */
  #loggedBytes = 0;
  #lastId = 0;

  get count(): number {
    return this.#byId.size;
  }

  get(id: number): Attachment | undefined {
    return this.#byId.get(id);
  }

  byGlobalId(globalId: string): Attachment | undefined {
    const id = this.#byGlobalId.get(globalId);
    return id === undefined ? undefined : this.#byId.get(id);
  }

  /** The attachments of the feature `parentObjectId`, in the order of their ids. */
  of(parentObjectId: number): Attachment[] {
    const ids = [...(this.#byParent.get(parentObjectId) ?? [])].sort((a, b) => a - b);
    return ids.map((id) => this.#byId.get(id)!);
  }

  /** Every attachment, in the order of their ids. */
  all(): IterableIterator<Attachment> {
    return this.#byId.values();
  }

  /** The id the next added attachment gets. */
  nextId(): number {
    this.#lastId += 1;
    return this.#lastId;
  }

  /** Applies one change of generation `serverGen` and logs it. */
  change(op: AttachmentOp, attachment: Attachment, serverGen: number): void {
    const before = this.#byId.get(attachment.id);
    if (before !== undefined) {
      const siblings = this.#byParent.get(before.parentObjectId);
      siblings?.delete(before.id);
      if (siblings?.size === 0) this.#byParent.delete(before.parentObjectId);
    }
    if (op === 'delete') {
      this.#byId.delete(attachment.id);
      this.#byGlobalId.delete(attachment.globalId);
    } else {
      this.#byId.set(attachment.id, attachment);
      this.#byGlobalId.set(attachment.globalId, attachment.id);
      this.#byParent.set(attachment.parentObjectId, (this.#byParent.get(attachment.parentObjectId) ?? new Set()).add(attachment.id));
    }
    this.#log.push({ serverGen, op, attachment });
    this.#loggedBytes += attachment.data.length;
  }

  /** Forgets the changes of generations up to `serverGen` (the log is in generation order). */
  forget(serverGen: number): void {
    const kept = this.#log.findIndex((entry) => entry.serverGen > serverGen);
    for (const { attachment } of this.#log.splice(0, kept < 0 ? this.#log.length : kept)) this.#loggedBytes -= attachment.data.length;
  }

  /** The bytes of the attachment versions in the log of changes. */
  get loggedBytes(): number {
    return this.#loggedBytes;
  }

  /** The generations of the oldest and the newest change logged, if any. */
  get loggedGens(): { oldest: number; newest: number } | undefined {
    const [first, last] = [this.#log[0], this.#log.at(-1)];
    return first === undefined || last === undefined ? undefined : { oldest: first.serverGen, newest: last.serverGen };
  }

  /** The changes with `from < serverGen <= to`, oldest first. */
  between(from: number, to: number): AttachmentChange[] {
    return this.#log.filter((entry) => entry.serverGen > from && entry.serverGen <= to);
  }

  /**
   * The net change of each attachment over a range, as `extractChanges` reports it: added then changed is an add
   * of its latest version, added then deleted is left out, anything then deleted a delete, else an update.
   */
  netChanges(from: number, to: number): { op: AttachmentOp; attachment: Attachment }[] {
    const net = new Map<number, { op: AttachmentOp; attachment: Attachment }>();
    for (const { op, attachment } of this.between(from, to)) {
      const before = net.get(attachment.id);
      const added = before?.op === 'add' || (before === undefined && op === 'add');
      if (added && op === 'delete') net.delete(attachment.id);
      else net.set(attachment.id, { op: added ? 'add' : op, attachment });
    }
    return [...net.values()];
  }
}
