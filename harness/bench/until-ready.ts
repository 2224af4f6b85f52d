import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves once geohook at `url` answers `/readyz` with 200; throws, naming the bench `section`, after `timeoutMs`. */
export async function untilReady(url: string, timeoutMs: number, section: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    (await fetch(`${url}/readyz`).then(
      (answer) => answer.status,
      () => 0,
    )) !== 200
  ) {
    if (Date.now() > deadline) throw new Error(`${section}: geohook's /readyz not 200 within ${timeoutMs} ms`);
    await sleep(50);
  }
}
