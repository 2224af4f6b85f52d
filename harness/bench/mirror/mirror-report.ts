import { fixed, thousands } from '../figures.js';
import type { Target } from '../targets.js';
import type { MirrorResult } from './run-mirror.js';

/** The mirror's goals: the initial copy's rate and its ratio to a bare COPY, and an edit's latency to its row. */
export function mirrorTargets(mirror: MirrorResult): Target[] {
  return [
    {
      name: `mirror initial copy of ${thousands(mirror.features)} features`,
      goal: '≥ 20,000/s',
      value: `${thousands(mirror.rowsPerSec)}/s`,
      met: mirror.rowsPerSec >= 20_000,
    },
    { name: 'mirror copy vs a bare COPY', goal: '≥ 0.70×', value: `${fixed(mirror.vsCopy, 2)}×`, met: mirror.vsCopy >= 0.7 },
    {
      name: 'mirror copy vs ogr2ogr (GDAL ESRIJSON → PostGIS with COPY)',
      goal: '≥ 2.00×',
      value: mirror.vsOgr2ogr === undefined ? `not measured: ${mirror.ogr2ogrSkipped}` : `${fixed(mirror.vsOgr2ogr, 2)}×`,
      met: (mirror.vsOgr2ogr ?? 0) >= 2,
    },
    { name: 'edit to its mirrored row, p99', goal: '≤ 1,500 ms', value: `${thousands(mirror.p99Ms)} ms`, met: mirror.p99Ms <= 1500 },
  ];
}

/** The mirror's lines of the human report. */
export function formatMirror(mirror: MirrorResult): string {
  return [
    `mirror: ${thousands(mirror.features)} parcels copied into PostGIS in ${fixed(mirror.copySeconds, 1)} s at ${thousands(mirror.rowsPerSec)}/s; ` +
      `bare COPY of the same rows ${fixed(mirror.copyFloorSeconds, 1)} s at ${thousands(mirror.copyFloorPerSec)}/s, ${fixed(mirror.vsCopy, 2)}× of it`,
    `  CPU per row copied: geohook's server ${fixed(mirror.copyCpuUsPerRow.server, 1)} µs, the emulator ${fixed(mirror.copyCpuUsPerRow.emulator, 1)} µs`,
    mirror.ogr2ogrRowsPerSec === undefined
      ? `  ogr2ogr: not measured (${mirror.ogr2ogrSkipped})`
      : `  ogr2ogr of the same layer ${fixed(mirror.ogr2ogrSeconds!, 1)} s at ${thousands(mirror.ogr2ogrRowsPerSec)}/s: geohook ${fixed(mirror.vsOgr2ogr!, 2)}× as fast`,
    `  ${mirror.edits} single edits to their row committed: p50 ${thousands(mirror.p50Ms)} ms, p99 ${thousands(mirror.p99Ms)} ms, max ${thousands(mirror.maxMs)} ms`,
  ].join('\n');
}
