import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { layerSchema } from './features/definition-schema.js';
import { parcelsLayers, roadsLayers } from './features/layer-schemas.js';
import type { CatalogService } from './types.js';

/** The default catalogue (docs/emulator.md). */
export const defaultCatalog: readonly CatalogService[] = [
  { folderName: 'Tools', serviceName: 'Buffer', type: 'GPServer', asynchronous: true },
  { folderName: 'Tools', serviceName: 'Geocode', type: 'GPServer', asynchronous: false },
  {
    folderName: 'Hosted',
    serviceName: 'Parcels',
    type: 'FeatureServer',
    hosted: true,
    capabilities: 'Create,Delete,Query,Update,Editing,ChangeTracking',
    syncEnabled: false,
    layers: parcelsLayers(),
  },
  {
    folderName: 'Hosted',
    serviceName: 'Roads',
    type: 'FeatureServer',
    hosted: true,
    capabilities: 'Create,Delete,Query,Update,Editing',
    syncEnabled: false,
    layers: roadsLayers(),
  },
  {
    folderName: 'Hosted',
    serviceName: 'Zoning',
    type: 'FeatureServer',
    hosted: true,
    capabilities: 'Create,Delete,Query,Update,Editing,ChangeTracking',
    syncEnabled: false,
    branchVersioned: true,
  },
  { folderName: 'Basemaps', serviceName: 'World', type: 'MapServer' },
];

const serviceSchema = z
  .object({
    folderName: z.string().regex(/^[A-Za-z0-9_-]*$/, 'letters, digits, "-" or "_" (empty for the root folder)'),
    serviceName: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "-" or "_"'),
    type: z.string().regex(/^[A-Za-z]+Server$/, 'a service type such as GPServer or FeatureServer'),
    asynchronous: z.boolean().exactOptional(),
    capabilities: z.string().exactOptional(),
    syncEnabled: z.boolean().exactOptional(),
    branchVersioned: z.boolean().exactOptional(),
    hosted: z.boolean().exactOptional(),
    versioned: z.boolean().exactOptional(),
    archiving: z.boolean().exactOptional(),
    layers: z.array(layerSchema).min(1).exactOptional(),
    extractChanges: z.enum(['enterprise-11', 'enterprise-10.6.1']).exactOptional(),
  })
  .strict();

const catalogSchema = z.array(serviceSchema).min(1, 'at least one service');

/** Reads a `--catalog FILE`: a JSON array of services; a bad file is one line naming the problem. */
export function loadCatalog(path: string): CatalogService[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'not valid JSON';
    throw new ConfigError(`--catalog: cannot read ${path} (${reason})`);
  }
  const result = catalogSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(`--catalog: ${path} at [${issue.path.join('.')}]: ${issue.message}`);
  }
  const seen = new Set<string>();
  for (const service of result.data) {
    const key = `${service.folderName}/${service.serviceName}.${service.type}`;
    if (seen.has(key)) throw new ConfigError(`--catalog: ${path}: ${key} is listed twice`);
    seen.add(key);
  }
  return result.data;
}
