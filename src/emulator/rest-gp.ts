import type { FiredJob } from './types.js';

/** One parameter of a job, as `…/jobs/<jobId>/results/<name>` (or `inputs/<name>`) answers it. */
export interface GpParameter {
  paramName: string;
  dataType: string;
  value: unknown;
}

const jobStatuses = { succeeded: 'esriJobSucceeded', failed: 'esriJobFailed', canceled: 'esriJobCancelled' } as const;

const spatialReference = { wkid: 4326, latestWkid: 4326 };
const point = { x: -117.1956, y: 34.0564 };

/** A square of `half` degrees around the point: what buffering it by a mile looks like, near enough. */
const square = (half: number): number[][][] => [
  [
    [point.x - half, point.y - half],
    [point.x - half, point.y + half],
    [point.x + half, point.y + half],
    [point.x + half, point.y - half],
    [point.x - half, point.y - half],
  ],
];

const featureSet = (geometryType: string, geometry: object) => ({
  geometryType,
  spatialReference,
  fields: [{ name: 'OBJECTID', type: 'esriFieldTypeOID', alias: 'OBJECTID' }],
  features: [{ attributes: { OBJECTID: 1 }, geometry }],
  exceededTransferLimit: false,
});

/** The parameters of every emulated task: a buffer of one point by one mile. */
const parameters = {
  inputs: [
    { paramName: 'Input_Features', dataType: 'GPFeatureRecordSetLayer', value: featureSet('esriGeometryPoint', point) },
    { paramName: 'Distance', dataType: 'GPLinearUnit', value: { distance: 1, units: 'esriMiles' } },
  ],
  results: [
    {
      paramName: 'Output_Polygons',
      dataType: 'GPFeatureRecordSetLayer',
      value: featureSet('esriGeometryPolygon', { rings: square(0.0145) }),
    },
    { paramName: 'Summary', dataType: 'GPString', value: 'Buffered 1 feature by 1 Miles.' },
  ],
} as const satisfies Record<string, readonly GpParameter[]>;

function messagesOf(job: FiredJob): { type: string; description: string }[] {
  const info = (description: string) => ({ type: 'esriJobMessageTypeInformative', description });
  const started = [info('Submitted.'), info('Executing...'), info(`Start Time: ${new Date(job.submitted).toUTCString()}`)];
  if (job.outcome === 'succeeded')
    return [...started, info(`Succeeded at ${new Date(job.submitted).toUTCString()} (Elapsed Time: 0.42 seconds)`)];
  if (job.outcome === 'canceled') return [...started, { type: 'esriJobMessageTypeWarning', description: 'Cancelled.' }];
  return [
    ...started,
    { type: 'esriJobMessageTypeError', description: 'ERROR 000735: Input Features: Value is required' },
    { type: 'esriJobMessageTypeError', description: `Failed to execute (${job.taskName}).` },
  ];
}

const listed = (list: readonly GpParameter[], kind: string) =>
  Object.fromEntries(list.map(({ paramName }) => [paramName, { paramUrl: `${kind}/${paramName}` }]));

/** The job resource (`…/GPServer/<task>/jobs/<jobId>`): status, messages, and where its parameters are. */
export function jobStatus(job: FiredJob): Record<string, unknown> {
  return {
    jobId: job.jobId,
    jobStatus: jobStatuses[job.outcome],
    results: job.outcome === 'succeeded' ? listed(parameters.results, 'results') : {},
    inputs: listed(parameters.inputs, 'inputs'),
    messages: messagesOf(job),
  };
}

/** A parameter of the job, or undefined when it has none of that name (results exist only once it succeeded). */
export function jobParameter(job: FiredJob, kind: 'inputs' | 'results', name: string): GpParameter | undefined {
  if (kind === 'results' && job.outcome !== 'succeeded') return undefined;
  return parameters[kind].find((parameter) => parameter.paramName === name);
}
