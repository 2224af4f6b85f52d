/** The part of autocannon 9 the bench uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface RequestData {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: Buffer | string;
  }

  export interface Request extends RequestData {
    /** Called before each request is built; returns the request to send. */
    setupRequest?: (request: RequestData, context: object) => RequestData;
  }

  export interface Options {
    url: string;
    method?: string;
    connections?: number;
    pipelining?: number;
    /** Seconds; ignored when `amount` is set. Checked at each sample: it ends on a multiple of `sampleInt`. */
    duration?: number;
    /** Milliseconds between the samples of the `requests` and `throughput` histograms (default 1000). */
    sampleInt?: number;
    /** Number of requests to complete; overrides `duration`. */
    amount?: number;
    /** Seconds to wait for a response. */
    timeout?: number;
    requests?: Request[];
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
