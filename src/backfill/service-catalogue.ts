import type { Logger } from 'pino';
import type { ServiceName } from '../arcgis/service-name.js';

/** Options of {@link createServiceCatalogue}. */
export interface ServiceCatalogueOptions {
  /** Reads the server's catalogue: the name (`folder/name.Type`) of every service it has (one findServices). */
  list: () => Promise<readonly ServiceName[]>;
  /** How long a catalogue read is used. @defaultValue 300000 */
  refreshMs?: number;
  /**
   * A service the catalogue does not list, or a failed read, makes a new read only once the last is this old: a
   * flood of unknown names costs at most one read per interval. @defaultValue 60000
   */
  missRefreshMs?: number;
  logger: Logger;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** The server's catalogue of services, read once and shared by every lookup until it is refreshed. */
export interface ServiceCatalogue {
  /** Whether the catalogue lists `service` (names compared without regard to case); undefined while it could never be read. */
  lists(service: ServiceName): Promise<boolean | undefined>;
}

/** A {@link ServiceCatalogue}: concurrent lookups share one read; a failed read keeps the last catalogue. */
export function createServiceCatalogue(options: ServiceCatalogueOptions): ServiceCatalogue {
  const { refreshMs = 300_000, missRefreshMs = 60_000, now = Date.now } = options;
  let names: Set<string> | undefined;
  let readAt: number | undefined;
  let reading: Promise<void> | undefined;

  const olderThan = (ms: number): boolean => readAt === undefined || now() - readAt >= ms;
  const refresh = (): Promise<void> =>
    (reading ??= options
      .list()
      .then(
        (listed) => {
          names = new Set(listed.map((name) => name.toLowerCase()));
        },
        (err: unknown) => options.logger.warn({ err }, 'the service catalogue could not be read: unregistered services are not read'),
      )
      .finally(() => {
        readAt = now();
        reading = undefined;
      }));

  return {
    async lists(service) {
      const key = service.toLowerCase();
      if (olderThan(refreshMs)) await refresh();
      if (names?.has(key) !== true && olderThan(missRefreshMs)) await refresh();
      return names?.has(key);
    },
  };
}
