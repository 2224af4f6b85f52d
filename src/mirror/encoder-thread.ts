import { Worker } from 'node:worker_threads';
import { errorCodes, GeohookError, type ErrorCode } from '../errors.js';
import type { EncodeRequest } from './encoder-worker.js';

/** An error thrown on the encoder thread, as it crosses over: its class's name, message and code, if any. */
export interface ThreadError {
  name: string;
  message: string;
  code?: string;
}

/** An error thrown on the encoder thread as its caller sees it: a GeohookError with its code, a TypeError, an Error. */
export function threadErrorOf({ name, message, code }: ThreadError): Error {
  if (code !== undefined && Object.hasOwn(errorCodes, code)) return new GeohookError(code as ErrorCode, message);
  return name === 'TypeError' ? new TypeError(message) : new Error(message);
}

type Reply = { id: number; result: unknown } | { id: number; error: ThreadError };

/** Distributes the request types over their kinds, each without the id the thread gives it. */
type RequestBody = EncodeRequest extends infer Request ? (Request extends EncodeRequest ? Omit<Request, 'id'> : never) : never;

/** A worker thread that encodes rows (`encoder-worker.ts`), asked one request at a time and answering each by id. */
export interface EncoderThread {
  /**
   * Resolves to the thread's answer; rejects with `unreadable(error)` for an error thrown on the thread, or with the
   * thread's own failure (it exited). `transfer`: array buffers of the body handed over to the thread.
   */
  request<Result>(body: RequestBody, unreadable: (error: ThreadError) => Error, transfer?: readonly ArrayBuffer[]): Promise<Result>;
  /** False once the thread has failed (exited or thrown outside a request): every request then rejects. */
  alive(): boolean;
  close(): Promise<void>;
}

/** Starts an encoder thread; `name` says whose in errors. */
export function startEncoderThread(name: string): EncoderThread {
  const worker = new Worker(new URL('./encoder-worker.js', import.meta.url));
  const pending = new Map<
    number,
    { resolve: (result: unknown) => void; reject: (err: unknown) => void; unreadable: (error: ThreadError) => Error }
  >();
  let nextId = 0;
  let failure: Error | undefined;
  worker.on('message', (reply: Reply) => {
    const request = pending.get(reply.id);
    pending.delete(reply.id);
    if ('result' in reply) request?.resolve(reply.result);
    else request?.reject(request.unreadable(reply.error));
  });
  const fail = (err: Error): void => {
    failure ??= err;
    for (const request of pending.values()) request.reject(err);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the ${name}'s thread exited (code ${code})`)));
  return {
    request: <Result>(body: RequestBody, unreadable: (error: ThreadError) => Error, transfer: readonly ArrayBuffer[] = []) =>
      new Promise<Result>((resolve, reject) => {
        if (failure !== undefined) return reject(failure);
        const id = (nextId += 1);
        pending.set(id, { resolve: resolve as (result: unknown) => void, reject, unreadable });
        worker.postMessage({ ...body, id }, [...transfer]);
      }),
    alive: () => failure === undefined,
    async close() {
      await worker.terminate();
    },
  };
}
