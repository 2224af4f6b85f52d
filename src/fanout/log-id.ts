/** A Redis stream entry id, `<ms>-<sequence>`, as two numbers. */
function partsOf(id: string): [number, number] {
  const dash = id.indexOf('-');
  return dash < 0 ? [Number(id), 0] : [Number(id.slice(0, dash)), Number(id.slice(dash + 1))];
}

/** Orders two stream entry ids (negative, zero, positive), as Redis does. */
export function compareLogIds(a: string, b: string): number {
  const [aMs, aSeq] = partsOf(a);
  const [bMs, bSeq] = partsOf(b);
  return aMs - bMs || aSeq - bSeq;
}

/** The time a stream entry id was made at, ms since the epoch. */
export const logIdMs = (id: string): number => partsOf(id)[0];

/** The cursor before every entry. */
export const LOG_START = '0-0';
