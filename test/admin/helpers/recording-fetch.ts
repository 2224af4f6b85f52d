/** One request an injected fetch saw. */
export interface RecordedRequest {
  url: string;
  method: string;
  contentType: string;
  /** The form body, parsed. */
  form: URLSearchParams;
}

/** What a scripted fetch does for one call: answer, throw, or hand over to the real fetch. */
export type Step = Response | Error | 'pass' | 'hang';

/**
 * A fetch that records every request and, call by call, follows `script` (then the real fetch). `hang`
 * never settles, ignoring the abort signal, as a stuck server or a broken fetch would.
 */
export function recordingFetch(script: Step[] = []): { fetch: typeof fetch; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const steps = [...script];
  const fetchFn: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    requests.push({
      url: String(input),
      method: init?.method ?? 'GET',
      contentType: headers.get('content-type') ?? '',
      form: new URLSearchParams(typeof init?.body === 'string' ? init.body : ''),
    });
    const step = steps.shift() ?? 'pass';
    if (step === 'pass') return globalThis.fetch(input, init);
    if (step === 'hang') return new Promise<Response>(() => undefined);
    if (step instanceof Error) throw step;
    return step;
  };
  return { fetch: fetchFn, requests };
}

/** A failure as undici reports a refused connection. */
export const connectionRefused = (): Error =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });

/** An HTTP answer with a JSON body. */
export const jsonAnswer = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** The rejection of `promise` (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
