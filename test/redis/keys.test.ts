import { readFileSync } from 'node:fs';
import t from 'tap';
import * as keys from '../../src/redis/keys.js';
import { repoPath } from '../helpers/paths.js';

t.test("docs/redis.md's table names every key src/redis/keys.ts builds", async (t) => {
  const table = readFileSync(repoPath('docs/redis.md'), 'utf8');
  const builders = Object.entries(keys) as [string, (...args: string[]) => string][];
  t.ok(builders.length >= 10);
  for (const [name, build] of builders) {
    // Each parameter as the docs write it: `<prefix>`, `<hook>`, `<service>`, `<event>`.
    const parameters = /^\(([^)]*)\)/
      .exec(String(build))![1]!
      .split(',')
      .map((parameter) => `<${parameter.trim()}>`);
    t.ok(table.includes(`| \`${build(...parameters)}\` |`), `${name}: ${build(...parameters)}`);
  }
});
