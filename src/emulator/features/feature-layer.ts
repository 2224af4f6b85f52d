import { LayerAttachments, type Attachment, type AttachmentOp } from './attachments.js';
import { ChangeLog, type ChangeOp, type Row } from './change-log.js';
import type { Attributes, FieldDefinition, LayerDefinition } from './types.js';

/** The bytes of attachment versions a layer's log of attachment changes keeps: 256 MiB. */
export const DEFAULT_ATTACHMENT_LOG_BYTES = 256 * 1024 * 1024;

/**
 * One layer (or table) of a feature service: its definition, its features by object id and GlobalID, and the log of
 * their changes by server generation.
 */
export class FeatureLayer {
  definition: LayerDefinition;
  readonly log: ChangeLog;
  /** Its attachments (none unless the definition has `hasAttachments`). */
  readonly attachments = new LayerAttachments();
  readonly #rows = new Map<number, Row>();
  readonly #byGlobalId = new Map<string, number>();
  #lastObjectId = 0;
  /** The generation of the newest change of the layer, its features' or its definition's. */
  #serverGen: number | undefined;

  readonly #maxAttachmentLogBytes: number;

  /**
   * @param log - the log of its features' changes (its bound).
   * @param maxAttachmentLogBytes - the bytes of attachment versions its attachments' log keeps before it forgets its
   *   oldest generations. @defaultValue {@link DEFAULT_ATTACHMENT_LOG_BYTES}
   */
  constructor(definition: LayerDefinition, log = new ChangeLog(), maxAttachmentLogBytes = DEFAULT_ATTACHMENT_LOG_BYTES) {
    this.definition = definition;
    this.log = log;
    this.#maxAttachmentLogBytes = maxAttachmentLogBytes;
  }

  get id(): number {
    return this.definition.id;
  }

  get count(): number {
    return this.#rows.size;
  }

  /** The generation of the layer's newest change, if it has one. */
  get serverGen(): number | undefined {
    return this.#serverGen;
  }

  row(objectId: number): Row | undefined {
    return this.#rows.get(objectId);
  }

  /** The object id of the feature with `globalId` (`{…}` in upper case), if there is one. */
  objectIdOf(globalId: string): number | undefined {
    return this.#byGlobalId.get(globalId);
  }

  /** The features, in the order of their object ids. */
  rows(): IterableIterator<[number, Row]> {
    return this.#rows.entries();
  }

  /** The object id the next added feature gets. */
  nextObjectId(): number {
    this.#lastObjectId += 1;
    return this.#lastObjectId;
  }

  /** The object id of the newest feature, if the layer has any. */
  newestObjectId(): number | undefined {
    let newest: number | undefined;
    for (const objectId of this.#rows.keys()) newest = objectId;
    return newest;
  }

  /** Applies one change of generation `serverGen` and logs it; `row` is the feature after it (for a delete, the one removed). */
  change(op: ChangeOp, objectId: number, row: Row, serverGen: number): void {
    const globalId = String(row.attributes[this.definition.globalIdField]);
    if (op === 'delete') {
      this.#rows.delete(objectId);
      this.#byGlobalId.delete(globalId);
    } else {
      this.#rows.set(objectId, row);
      this.#byGlobalId.set(globalId, objectId);
    }
    this.log.append({ serverGen, objectId, globalId, op, row });
    this.#serverGen = serverGen;
  }

  /** Applies one change of an attachment of generation `serverGen` and logs it. */
  changeAttachment(op: AttachmentOp, attachment: Attachment, serverGen: number): void {
    this.attachments.change(op, attachment, serverGen);
    this.#serverGen = serverGen;
  }

  /**
   * Ends a generation's changes: the change log forgets its oldest generations past its bound of entries, and the
   * attachments' log its oldest past its bound of bytes (one generation larger than the bound is kept); each forgets
   * what the other did, so that a range one cannot answer whole is refused for both.
   */
  endGeneration(): void {
    this.log.trim();
    while (this.attachments.loggedBytes > this.#maxAttachmentLogBytes) {
      const gens = this.attachments.loggedGens;
      if (gens === undefined || gens.oldest === gens.newest) break;
      this.attachments.forget(gens.oldest);
      this.log.forget(gens.oldest);
    }
    const forgotten = this.log.forgottenUpTo;
    if (forgotten !== undefined) this.attachments.forget(forgotten);
  }

  /** Adds fields to the definition; the features get them as null. Returns the layer. */
  addFields(fields: readonly FieldDefinition[]): this {
    this.definition.fields.push(...fields);
    const added = Object.fromEntries(fields.map((field) => [field.name, null]));
    this.#replaceRows((row) => ({ ...row.attributes, ...added }));
    return this;
  }

  /** Removes fields from the definition and from the features (rows in the change log keep them). Returns the layer. */
  deleteFields(names: readonly string[]): this {
    const gone = new Set(names);
    this.definition.fields = this.definition.fields.filter((field) => !gone.has(field.name));
    this.#replaceRows((row) => Object.fromEntries(Object.entries(row.attributes).filter(([name]) => !gone.has(name))));
    return this;
  }

  #replaceRows(attributesOf: (row: Row) => Attributes): void {
    for (const [objectId, row] of this.#rows) {
      this.#rows.set(objectId, Object.freeze({ attributes: Object.freeze(attributesOf(row)), geometry: row.geometry }));
    }
  }

  /** Marks a change of the layer that touches no feature (its definition) at `serverGen`. */
  touch(serverGen: number): void {
    this.#serverGen = serverGen;
  }
}
