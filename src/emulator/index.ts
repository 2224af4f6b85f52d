/** The admin-API emulator, the package entry `geohook/emulator`: a GIS server to test receivers against. */
export { buildEmulator, DEFAULT_ORG_ID, type EmulatorOptions } from './build-emulator.js';
export { defaultCatalog, loadCatalog } from './catalog.js';
export { EmulatorClock, type EmulatorClockOptions } from './clock.js';
export type { CatalogService, DeliveryRecord, DeliveryAttempt } from './types.js';
