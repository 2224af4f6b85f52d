import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';

/** The exact bytes of FILE, or of stdin when no file (or `-`) is given. */
export async function readInput(file: string | undefined): Promise<Buffer> {
  if (file === undefined || file === '-') return buffer(process.stdin);
  return readFile(file);
}
