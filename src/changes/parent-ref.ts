/**
 * What the resolver keeps of a submission's parent while nothing else of its submission has come: where its row is,
 * not the row (docs/submissions.md). A parent alone is no submission; one whose related rows or Survey123 webhook
 * come later has its row read from the service when its submission closes.
 */
export interface ParentRef {
  hook: string;
  /** The service, `folder/name.FeatureServer`. */
  serviceName: string;
  layerId: number;
  objectId: number;
  globalId?: string;
  /** The parent's `ts`: its edit time from editor tracking. */
  ts: string;
}

/** A reference as stored: its fields joined by tabs (none holds one). */
export const encodeParentRef = (ref: ParentRef): string =>
  [ref.hook, ref.serviceName, ref.layerId, ref.objectId, ref.globalId ?? '', ref.ts].join('\t');

/** A stored reference read back; undefined when it is not one. */
export function decodeParentRef(value: string): ParentRef | undefined {
  const [hook, serviceName, layerId, objectId, globalId, ts] = value.split('\t');
  if (hook === undefined || serviceName === undefined || ts === undefined) return undefined;
  const ref: ParentRef = { hook, serviceName, layerId: Number(layerId), objectId: Number(objectId), ts };
  if (globalId !== undefined && globalId !== '') ref.globalId = globalId;
  return Number.isInteger(ref.layerId) && Number.isInteger(ref.objectId) ? ref : undefined;
}
