import { randomUUID } from 'node:crypto';
import { AdminError } from '../admin-error.js';
import {
  attachmentKey,
  attachmentToAdd,
  attachmentUpdated,
  readAttachmentEdits,
  type AttachmentResult,
  type AttachmentResults,
  type PlannedAttachmentChange,
} from './attachment-edits.js';
import type { Attachment } from './attachments.js';
import type { ChangeOp, Row } from './change-log.js';
import { attributesOf, editedAttributes, listOf } from './edited-attributes.js';
import { featureGeometry } from './feature-geometry.js';
import type { FeatureLayer } from './feature-layer.js';
import { normalizeGuid, type EditError } from './field-values.js';
import type { Attributes } from './types.js';

/** One layer's part of an `applyEdits` call, as the request gives it (checked here). */
export interface LayerEdits {
  id: number;
  adds?: unknown;
  updates?: unknown;
  deletes?: unknown;
  /** With `useGlobalIds`: `{adds, updates, deletes}` of the layer's attachments. */
  attachments?: unknown;
}

/** How an `applyEdits` call is applied. */
export interface ApplyEditsOptions {
  /** Updates and deletes name features by GlobalID, and adds may bring their own. */
  useGlobalIds: boolean;
  /** One invalid feature applies nothing (the product's default). */
  rollbackOnFailure: boolean;
  /** The editing user, written to the editor-tracking fields. */
  user: string;
}

/** An edit result, as the product answers it for each feature. */
export interface EditResult {
  objectId: number;
  globalId: string | null;
  success: boolean;
  error?: EditError;
}

/** One layer's results, as the service-level `applyEdits` answers them. */
export interface LayerEditResults {
  id: number;
  addResults: EditResult[];
  updateResults: EditResult[];
  deleteResults: EditResult[];
  /** When the call edited attachments of the layer. */
  attachments?: AttachmentResults;
}

/** A change an `applyEdits` call makes to one feature, checked and ready to apply. */
interface PlannedChange {
  layer: FeatureLayer;
  op: ChangeOp;
  objectId: number;
  /** The row after the change, before editor tracking; for a delete, the row removed. */
  row: Row;
}

type Kind = 'addResults' | 'updateResults' | 'deleteResults';

const ROLLED_BACK: EditError = { code: 1003, description: 'Operation rolled back.' };
const MISSING: EditError = { code: 1011, description: 'Object is missing.' };

/**
 * Checks and applies one `applyEdits` call on a service's layers, as the product does: adds, updates and deletes
 * per layer, each feature answered with its result. With `rollbackOnFailure`, one failure applies nothing (the
 * others answer "Operation rolled back."). Every change applied shares one server generation, taken from
 * `nextGeneration` only when something changes; editor tracking is filled with the user and that generation's time.
 */
export class EditBatch {
  readonly #layers: (id: number) => FeatureLayer | undefined;
  readonly #options: ApplyEditsOptions;
  readonly #planned: PlannedChange[] = [];
  readonly #results: LayerEditResults[] = [];
  readonly #plannedAttachments: PlannedAttachmentChange[] = [];
  /** Where each planned change's result is, to mark it rolled back. */
  readonly #resultOf: (EditResult | AttachmentResult)[] = [];
  /** Attachments as the call has made them so far, by GlobalID (null: deleted). */
  readonly #pendingAttachments = new Map<FeatureLayer, Map<string, Attachment | null>>();
  /** Rows as the call has made them so far, so a feature added and updated in one call is found. */
  readonly #pending = new Map<FeatureLayer, Map<number, Row | null>>();
  #failed = false;

  constructor(layers: (id: number) => FeatureLayer | undefined, options: ApplyEditsOptions) {
    this.#layers = layers;
    this.#options = options;
  }

  /** Plans one layer's edits (in the product's order: adds, updates, deletes); throws for a request that cannot be read. */
  plan(edits: LayerEdits): void {
    const layer = this.#layers(edits.id);
    if (layer === undefined) throw new AdminError(400, 'Unable to complete operation.', `Layer ${edits.id} not found.`);
    const results: LayerEditResults = { id: edits.id, addResults: [], updateResults: [], deleteResults: [] };
    this.#results.push(results);
    for (const feature of listOf(edits.adds, 'adds')) this.#add(layer, feature, results);
    for (const feature of listOf(edits.updates, 'updates')) this.#update(layer, feature, results);
    for (const id of listOf(edits.deletes, 'deletes')) this.#delete(layer, id, results);
    const attachments = readAttachmentEdits(layer, edits.attachments, this.#options.useGlobalIds);
    if (attachments === undefined) return;
    const attachmentResults: AttachmentResults = { addResults: [], updateResults: [], deleteResults: [] };
    results.attachments = attachmentResults;
    for (const input of attachments.adds) this.#addAttachment(layer, input, attachmentResults);
    for (const input of attachments.updates) this.#changeAttachment(layer, 'update', input, attachmentResults);
    for (const input of attachments.deletes) this.#changeAttachment(layer, 'delete', input, attachmentResults);
  }

  /** The attachment with `globalId` as the call has made it so far. */
  #currentAttachment(layer: FeatureLayer, globalId: string): Attachment | undefined {
    const pending = this.#pendingAttachments.get(layer)?.get(globalId);
    return pending === null ? undefined : (pending ?? layer.attachments.byGlobalId(globalId));
  }

  #recordAttachment(list: AttachmentResult[], result: AttachmentResult, change?: PlannedAttachmentChange): void {
    list.push(result);
    if (change === undefined) {
      this.#failed = true;
      return;
    }
    this.#plannedAttachments.push(change);
    this.#resultOf.push(result);
    let pending = this.#pendingAttachments.get(change.layer);
    if (pending === undefined) this.#pendingAttachments.set(change.layer, (pending = new Map()));
    pending.set(change.attachment.globalId, change.op === 'delete' ? null : change.attachment);
  }

  #addAttachment(layer: FeatureLayer, input: unknown, results: AttachmentResults): void {
    const parent = (globalId: string): number | undefined => {
      const objectId = layer.objectIdOf(globalId) ?? this.#pendingGlobalId(layer, globalId);
      return objectId !== undefined && this.#current(layer, objectId) !== undefined ? objectId : undefined;
    };
    const made = attachmentToAdd(layer, input, parent, (globalId) => this.#currentAttachment(layer, globalId) !== undefined);
    if ('error' in made)
      return this.#recordAttachment(results.addResults, { objectId: -1, globalId: made.globalId, success: false, error: made.error });
    const { attachment } = made;
    this.#recordAttachment(
      results.addResults,
      { objectId: attachment.id, globalId: attachment.globalId, success: true },
      { layer, op: 'add', attachment },
    );
  }

  #changeAttachment(layer: FeatureLayer, op: 'update' | 'delete', input: unknown, results: AttachmentResults): void {
    const list = op === 'update' ? results.updateResults : results.deleteResults;
    const globalId = attachmentKey(input);
    const before = globalId === undefined ? undefined : this.#currentAttachment(layer, globalId);
    if (before === undefined)
      return this.#recordAttachment(list, { objectId: -1, globalId: globalId ?? null, success: false, error: MISSING });
    const changed = op === 'delete' ? { attachment: before } : attachmentUpdated(before, input);
    if ('error' in changed)
      return this.#recordAttachment(list, { objectId: before.id, globalId: before.globalId, success: false, error: changed.error });
    this.#recordAttachment(
      list,
      { objectId: before.id, globalId: before.globalId, success: true },
      { layer, op, attachment: changed.attachment },
    );
  }

  #current(layer: FeatureLayer, objectId: number): Row | undefined {
    const pending = this.#pending.get(layer)?.get(objectId);
    return pending === null ? undefined : (pending ?? layer.row(objectId));
  }

  #record(results: LayerEditResults, kind: Kind, result: EditResult, change?: PlannedChange): void {
    results[kind].push(result);
    if (change === undefined) {
      this.#failed = true;
      return;
    }
    this.#planned.push(change);
    this.#resultOf.push(result);
    let pending = this.#pending.get(change.layer);
    if (pending === undefined) this.#pending.set(change.layer, (pending = new Map()));
    pending.set(change.objectId, change.op === 'delete' ? null : change.row);
  }

  #add(layer: FeatureLayer, feature: unknown, results: LayerEditResults): void {
    const { globalIdField } = layer.definition;
    const given = attributesOf(feature) ?? {};
    const ownGlobalId = this.#options.useGlobalIds
      ? normalizeGuid(Object.entries(given).find(([name]) => name.toLowerCase() === globalIdField)?.[1])
      : undefined;
    const globalId = ownGlobalId ?? `{${randomUUID().toUpperCase()}}`;
    const fail = (error: EditError): void =>
      this.#record(results, 'addResults', { objectId: -1, globalId: ownGlobalId ?? null, success: false, error });
    if (attributesOf(feature) === undefined && (feature as { geometry?: unknown } | null)?.geometry === undefined)
      return fail({ code: 1000, description: 'Non-specific edit content error.' });
    if (layer.objectIdOf(globalId) !== undefined)
      return fail({ code: 1022, description: 'Unique constraint violation error on inserting the value.' });
    const edited = editedAttributes(layer, given);
    if ('error' in edited) return fail(edited.error);
    const geometry = featureGeometry(layer.definition, (feature as { geometry?: unknown }).geometry ?? null);
    if ('error' in geometry) return fail(geometry.error);
    const objectId = layer.nextObjectId();
    const attributes: Attributes = Object.fromEntries(layer.definition.fields.map((field) => [field.name, null]));
    Object.assign(attributes, edited.attributes, { [layer.definition.objectIdField]: objectId, [globalIdField]: globalId });
    const row = { attributes, geometry: geometry.geometry };
    this.#record(results, 'addResults', { objectId, globalId, success: true }, { layer, op: 'add', objectId, row });
  }

  /** The object id an update or delete names: by GlobalID with `useGlobalIds`, else by object id. */
  #target(layer: FeatureLayer, id: unknown): number | undefined {
    if (this.#options.useGlobalIds) {
      const globalId = normalizeGuid(id);
      return globalId === undefined ? undefined : (layer.objectIdOf(globalId) ?? this.#pendingGlobalId(layer, globalId));
    }
    const objectId = typeof id === 'string' && /^\s*\d+\s*$/.test(id) ? Number(id) : id;
    return Number.isSafeInteger(objectId) ? (objectId as number) : undefined;
  }

  #pendingGlobalId(layer: FeatureLayer, globalId: string): number | undefined {
    for (const [objectId, row] of this.#pending.get(layer) ?? []) {
      if (row !== null && row.attributes[layer.definition.globalIdField] === globalId) return objectId;
    }
    return undefined;
  }

  #update(layer: FeatureLayer, feature: unknown, results: LayerEditResults): void {
    const { objectIdField, globalIdField } = layer.definition;
    const given = attributesOf(feature) ?? {};
    const key = Object.entries(given).find(
      ([name]) => name.toLowerCase() === (this.#options.useGlobalIds ? globalIdField : objectIdField),
    )?.[1];
    const objectId = this.#target(layer, key);
    const before = objectId === undefined ? undefined : this.#current(layer, objectId);
    const fail = (error: EditError): void =>
      this.#record(results, 'updateResults', { objectId: objectId ?? -1, globalId: normalizeGuid(key) ?? null, success: false, error });
    if (objectId === undefined || before === undefined) return fail(MISSING);
    const edited = editedAttributes(layer, given);
    if ('error' in edited) return fail(edited.error);
    const input = (feature as { geometry?: unknown }).geometry;
    const geometry = input === undefined ? { geometry: before.geometry } : featureGeometry(layer.definition, input);
    if ('error' in geometry) return fail(geometry.error);
    const row = { attributes: { ...before.attributes, ...edited.attributes }, geometry: geometry.geometry };
    const globalId = String(before.attributes[globalIdField]);
    this.#record(results, 'updateResults', { objectId, globalId, success: true }, { layer, op: 'update', objectId, row });
  }

  #delete(layer: FeatureLayer, id: unknown, results: LayerEditResults): void {
    const objectId = this.#target(layer, id);
    const before = objectId === undefined ? undefined : this.#current(layer, objectId);
    if (objectId === undefined || before === undefined) {
      const globalId = this.#options.useGlobalIds ? (normalizeGuid(id) ?? null) : null;
      return this.#record(results, 'deleteResults', { objectId: objectId ?? -1, globalId, success: false, error: MISSING });
    }
    const globalId = String(before.attributes[layer.definition.globalIdField]);
    this.#record(results, 'deleteResults', { objectId, globalId, success: true }, { layer, op: 'delete', objectId, row: before });
  }

  /** Whether a feature failed (with `rollbackOnFailure`, nothing is applied then). */
  get failed(): boolean {
    return this.#failed;
  }

  /** The changes of features that will be applied. */
  get changes(): readonly PlannedChange[] {
    return this.#failed && this.#options.rollbackOnFailure ? [] : this.#planned;
  }

  /** The changes of attachments that will be applied (besides those of deleted features, deleted with them). */
  get attachmentChanges(): readonly PlannedAttachmentChange[] {
    return this.#failed && this.#options.rollbackOnFailure ? [] : this.#plannedAttachments;
  }

  /**
   * Applies the planned changes at `serverGen` (taken at `when`), filling editor tracking; or, when rolled back,
   * turns every successful result into "Operation rolled back.". Returns the layers' results.
   */
  commit(serverGen: number | undefined, when: number): LayerEditResults[] {
    if (this.#failed && this.#options.rollbackOnFailure) {
      for (const result of this.#resultOf) Object.assign(result, { success: false, error: ROLLED_BACK });
      return this.#results;
    }
    if (serverGen === undefined) return this.#results;
    for (const { layer, op, objectId, row } of this.#planned) {
      layer.change(op, objectId, op === 'delete' ? row : this.#tracked(layer, op, row, when), serverGen);
    }
    for (const { layer, op, attachment } of this.#plannedAttachments) layer.changeAttachment(op, attachment, serverGen);
    // A deleted feature's attachments go with it, in the same generation.
    for (const { layer, op, objectId } of this.#planned) {
      if (op === 'delete') for (const attachment of layer.attachments.of(objectId)) layer.changeAttachment('delete', attachment, serverGen);
    }
    for (const layer of new Set([...this.#planned, ...this.#plannedAttachments].map(({ layer }) => layer))) layer.endGeneration();
    return this.#results;
  }

  /** The row with its editor-tracking fields filled: creator and creation date on an add, editor and date on both. */
  #tracked(layer: FeatureLayer, op: 'add' | 'update', row: Row, when: number): Row {
    const info = layer.definition.editFieldsInfo;
    if (info === undefined) return Object.freeze(row);
    const { user } = this.#options;
    const tracked: Attributes = { ...row.attributes, [info.editorField]: user, [info.editDateField]: when };
    if (op === 'add') Object.assign(tracked, { [info.creatorField]: user, [info.creationDateField]: when });
    return Object.freeze({ attributes: Object.freeze(tracked), geometry: row.geometry });
  }
}
