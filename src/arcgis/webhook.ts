/** A webhook record and the parameters that create one, as the admin API names them. */

/** `scheduleInfo.recurrenceInfo.frequency`: the units real clients send (the spec's examples show `second`). */
export const scheduleFrequencies = ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'] as const;
export type ScheduleFrequency = (typeof scheduleFrequencies)[number];

/** `scheduleInfo.state`; clients may leave it out, which means `enabled`. */
export const scheduleStates = ['enabled', 'disabled'] as const;
export type ScheduleState = (typeof scheduleStates)[number];

/** `scheduleInfo` of a feature-service webhook. */
export interface ScheduleInfo {
  name: string;
  state: ScheduleState;
  startAt: number;
  recurrenceInfo: { interval: number; frequency: ScheduleFrequency };
}

/** What create and edit set on a webhook, on ArcGIS Enterprise and ArcGIS Online alike. */
export interface WebhookFields {
  name: string;
  changeTypes: string[];
  signatureKey: string;
  hookUrl: string;
  active: boolean;
  contentType: 'application/json' | 'application/x-www-form-urlencoded';
  scheduleInfo: ScheduleInfo | Record<string, never>;
  payloadFormat: 'json' | 'pjson';
}

/** A webhook as the admin API returns it (without `status`). */
export interface Webhook extends WebhookFields {
  id: string;
  folderName: string;
  serviceName: string;
  serviceType: string;
  created: number;
  modified: number;
  ownerId: string;
  modifiedId: string;
}

/** Parameters of `webhooks/create` (and, all optional, of `edit`). */
export interface CreateWebhookParams {
  name: string;
  hookUrl: string;
  /** Feature services: the event triggers; an array is sent as a comma list. @defaultValue the server's, `*` */
  changeTypes?: string[] | string;
  signatureKey?: string;
  /** @defaultValue the server's, false */
  active?: boolean;
  /** @defaultValue the server's, 'application/json' */
  contentType?: 'application/json' | 'application/x-www-form-urlencoded';
  /** @defaultValue the server's, 'json' */
  payloadFormat?: 'json' | 'pjson';
  /** Feature services: the window for cataloguing events. */
  scheduleInfo?: object;
}

/**
 * A hosted feature layer webhook of ArcGIS Online, as its `WebHooks` resource returns it: addressed by
 * `globalId`, on a service with no folder.
 */
export interface OnlineWebhook extends WebhookFields {
  globalId: string;
  serviceName: string;
  created: number;
  modified: number;
  owner: string;
}
