import fc from 'fast-check';

/**
 * Replays a failure fast-check printed: `FUZZ_SEED=<seed>` makes every property of the file draw from that
 * seed (and `FUZZ_PATH=<path>` go straight to the counterexample, for a property run alone with `--grep`).
 * Without them, each run draws a new seed.
 */
export function replayFromEnvironment(): void {
  const seed = process.env.FUZZ_SEED;
  if (seed === undefined || seed.trim() === '') return;
  const path = process.env.FUZZ_PATH;
  fc.configureGlobal({ seed: Number(seed), ...(path === undefined || path === '' ? {} : { path }) });
}
