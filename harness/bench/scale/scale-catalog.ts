import type { CatalogService } from '../../../src/emulator/types.js';

/** The folder of the scale catalogue: `REGISTER=Scale/*` names all of it. */
export const SCALE_FOLDER = 'Scale';

/** `count` hosted feature services with change tracking, `Scale/Svc00000.FeatureServer` onwards. */
export const scaleCatalog = (count: number): CatalogService[] =>
  Array.from({ length: count }, (_, index) => ({
    folderName: SCALE_FOLDER,
    serviceName: `Svc${String(index).padStart(5, '0')}`,
    type: 'FeatureServer',
    capabilities: 'Create,Delete,Query,Update,Editing,ChangeTracking',
    syncEnabled: false,
    hosted: true,
  }));
