/**
 * The attachment a geohook attachment link opens (docs/changes.md#attachment-links): at a configured service, its
 * layer, its parent's object id and its id, with the content type and name its answer is sent under.
 */
export interface AttachmentLinkTarget {
  /** `Hosted/Parcels.FeatureServer`: a service of the configuration, which alone says where the bytes are. */
  service: string;
  layerId: number;
  objectId: number;
  attachmentId: number;
  contentType: string;
  name: string;
}
