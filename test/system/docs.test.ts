import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { Command } from 'commander';
import t from 'tap';
import { buildProgram } from '../../src/cli/program.js';
import { configFileSchema, emulatorEnvSchema, envSchema } from '../../src/config/schema.js';
import { repoRoot as root } from '../helpers/paths.js';

const read = (path: string): string => readFileSync(join(root, path), 'utf8');

const docPages = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);
/** Every page of reference text, by its path from the root. */
const pages = ['README.md', ...docPages, 'deploy/kubernetes/REDIS.md'];

/**
 * Phrases that do not belong in reference text: documents that are not in the repository, the team's
 * tracker, development history, and facts about one development machine.
 */
const forbidden: readonly [RegExp, string][] = [
  [/CONTRACT §/, 'cites a document that is not in the repository'],
  [/spec\/admin-api\.md/, 'cites a document that is not in the repository'],
  [/\bresearch\/[\w-]+\.md/, 'cites a document that is not in the repository'],
  [/\bissue #\d+/i, "cites the team's tracker"],
  [/\b(before|after|until) (this|the) (change|limit|fix)\b/i, 'narrates development history'],
  [/\bwhat is built today\b/i, 'is a status report'],
  [/\b(is|are) on (its|their) way\b/i, 'is a status report'],
  [/\bthis machine\b/i, 'describes one development machine'],
  [/\btoday's (slower |faster )?machine\b/i, 'describes one development machine'],
  [/\bthis registry\b/i, 'describes one development mirror'],
  [/\bwhere geohook is developed\b/i, 'describes the development set-up'],
];

/** The text of a page without fenced blocks, and with inline code emptied: links and headings only count outside code. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces turned into hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, numbered as GitHub numbers repeats. */
function anchorsOf(path: string): Set<string> {
  const headings = read(path)
    .replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
    .matchAll(/^#{1,6} +(.+?) *#*$/gm);
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of headings) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The relative link targets of a page (external links and those in code left out). */
function relativeLinks(path: string): string[] {
  return [...prose(read(path)).matchAll(/\]\(([^)\s]+)(?: +"[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

t.test('the README has no placeholder to fill in, and its quick start leads to the mirror and the relays (issue 53)', async (t) => {
  const readme = read('README.md');
  t.notMatch(readme, /<geohook-repository>|git clone <[^>]*>/, 'no clone URL to guess');
  const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  t.match(quickStart, /geohook up --mirror.*\(docs\/mirror\.md\)/s);
  t.match(quickStart, /\(docs\/relays\.md\)/);
});

t.test('the README stays a short front door: at most 200 lines', async (t) => {
  const lines = read('README.md').split('\n').length;
  t.ok(lines <= 200, `README.md has ${lines} lines`);
});

t.test('every relative link of the README and the docs points at a file that exists, and at a heading that exists', async (t) => {
  let checked = 0;
  for (const page of pages) {
    for (const target of relativeLinks(page)) {
      checked += 1;
      const [file = '', anchor] = target.split('#');
      const resolved = file === '' ? page : normalize(join(dirname(page), decodeURIComponent(file)));
      if (!existsSync(join(root, resolved))) {
        t.fail(`${page}: link ${target}: ${resolved} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      t.ok(resolved.endsWith('.md') && anchorsOf(resolved).has(anchor), `${page}: link ${target}: ${resolved} has a heading #${anchor}`);
    }
  }
  t.ok(checked > 50, `${checked} links checked`);
});

t.test('every page of docs/ is listed in the README', async (t) => {
  const linked = new Set(relativeLinks('README.md').map((target) => target.split('#')[0]));
  for (const page of docPages) t.ok(linked.has(page), `README.md links to ${page}`);
});

t.test('no page cites what a clone lacks, narrates development history, or describes a development machine', async (t) => {
  for (const page of pages) {
    const text = read(page);
    for (const [phrase, why] of forbidden) {
      const found = phrase.exec(text);
      t.notOk(found, `${page}${found === null ? '' : `: "${found[0]}"`} ${why}`);
    }
  }
});

t.test('docs/configuration.md documents every environment variable and every section of the GEOHOOK_CONFIG file', async (t) => {
  const page = read('docs/configuration.md');
  const variables = [...new Set([...Object.keys(envSchema.shape), ...Object.keys(emulatorEnvSchema.shape)])];
  t.ok(variables.length > 20, `${variables.length} variables`);
  for (const name of variables) t.ok(page.includes(`\`${name}\``), `${name} is documented`);
  for (const section of Object.keys(configFileSchema.shape)) {
    t.match(page, new RegExp(`\`${section}[\`.]`), `GEOHOOK_CONFIG's ${section} is documented`);
  }
});

/** Every command path under `command` (`['admin', 'placement', 'explain']`…). */
function commandsOf(command: Command, path: readonly string[] = []): string[][] {
  return command.commands
    .filter((sub) => sub.name() !== 'help')
    .flatMap((sub) => [[...path, sub.name()], ...commandsOf(sub, [...path, sub.name()])]);
}

t.test('docs/cli.md documents every command of the geohook binary', async (t) => {
  const page = read('docs/cli.md');
  const commands = commandsOf(await buildProgram());
  t.ok(commands.length > 25, `${commands.length} commands found`);
  for (const command of commands) {
    const name = `geohook ${command.join(' ')}`;
    t.match(page, new RegExp(`${name}(?![\\w-])`), `${name} is documented`);
  }
});

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(`${dir}/${entry.name}`) : entry.name.endsWith('.ts') ? [`${dir}/${entry.name}`] : [],
  );
}

t.test('source comments cite no document that is not in the repository', async (t) => {
  const absent = forbidden.filter(([, why]) => why.startsWith('cites a document'));
  const files = ['src', 'test', 'harness', 'examples'].flatMap((dir) => sources(dir)).filter((file) => file !== 'test/system/docs.test.ts');
  t.ok(files.length > 200, `${files.length} source files read`);
  const citations = files.flatMap((file) => {
    const text = read(file);
    return absent.filter(([pattern]) => pattern.test(text)).map(([pattern]) => `${file}: ${pattern.source}`);
  });
  t.same(citations, [], 'the interface is documented under docs/, and comments point there');
});

t.test('docs/receiver.md lists every metric geohook defines', async (t) => {
  const page = read('docs/receiver.md');
  const metrics = new Set(
    sources('src').flatMap((file) => [...read(file).matchAll(/name: '(geohook_[a-z_]+)'/g)].map((match) => match[1]!)),
  );
  t.ok(metrics.size >= 7, `${metrics.size} metrics found in src/`);
  for (const metric of metrics) t.ok(page.includes(`\`${metric}\``), `${metric} is listed`);
  t.ok(page.includes('`geohook_process_*`') && page.includes('`geohook_nodejs_*`'), "prom-client's default metrics are listed");
});
