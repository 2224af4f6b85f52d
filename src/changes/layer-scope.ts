import { parseScope } from '../events/tracked-ranges.js';
import { changesPreviousKey } from '../redis/keys.js';

/** A layer's own scope: the scope's on ArcGIS Online (one layer), else `<scope>#<layer>`. */
export const layerScopeOf = (scope: string, layerId: number): string =>
  parseScope(scope).layerId === undefined ? `${scope}#${layerId}` : scope;

/** The key of a layer's previous values. */
export const previousKeyOf = (prefix: string, scope: string, layerId: number): string =>
  changesPreviousKey(prefix, layerScopeOf(scope, layerId));
