import { Counter, Gauge, type Registry } from 'prom-client';
import type { LayerSync } from './sync-scope.js';

/** What the mirror reports to Prometheus. */
export interface MirrorMetrics {
  /** A sync of `service` committed these layers. */
  synced(service: string, layers: readonly LayerSync[]): void;
  /** A sync of `service` failed (rolled back, tried again). */
  failed(service: string): void;
}

/** The mirror's metrics on `registry` (the receiver's `/metrics`): rows written, each table's generation, failed syncs. */
export function createMirrorMetrics(registry: Registry): MirrorMetrics {
  const rows = new Counter({
    name: 'geohook_mirror_rows_written_total',
    help: 'Rows the PostGIS mirror wrote, by service and kind: copied (initial copy), upserted, deleted',
    labelNames: ['service', 'kind'],
    registers: [registry],
  });
  const generation = new Gauge({
    name: 'geohook_mirror_server_generation',
    help: "The server generation each mirrored layer's table equals (mirror_state), as this process last wrote it",
    labelNames: ['service', 'layer'],
    registers: [registry],
  });
  const failures = new Counter({
    name: 'geohook_mirror_sync_failures_total',
    help: 'Syncs of a mirrored service that failed and were rolled back (tried again; see geohook mirror status)',
    labelNames: ['service'],
    registers: [registry],
  });
  return {
    synced(service, layers) {
      for (const layer of layers) {
        rows.inc({ service, kind: 'copied' }, layer.copied ?? 0);
        rows.inc({ service, kind: 'upserted' }, layer.upserted);
        rows.inc({ service, kind: 'deleted' }, layer.deleted);
        generation.set({ service, layer: String(layer.layer) }, layer.serverGen);
      }
    },
    failed(service) {
      failures.inc({ service });
    },
  };
}
