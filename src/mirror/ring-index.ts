/** A position: x, y, then z and/or m when the geometry has them. */
export type Coordinate = number[];

/** Rings of at most this many edges are scanned whole; longer ones get bands. */
const SCAN_EDGES = 32;
/** Edges per band the bands aim at, and how many band entries per edge they may take at most. */
const EDGES_PER_BAND = 8;
const ENTRIES_PER_EDGE = 8;

/**
 * A closed ring with its bounding box and, when it is long, its edges sorted into horizontal bands, so that
 * {@link RingIndex.locate} reads only the edges whose y-range holds the point's y (as GEOS's indexed point-in-area
 * locator does). The answer is the one a scan of every edge gives: an edge outside the point's band can neither be
 * crossed by its ray nor hold it.
 */
export class RingIndex {
  readonly minX: number;
  readonly minY: number;
  readonly maxX: number;
  readonly maxY: number;
  /** The vertices' x and y, in order. */
  private readonly xs: Float64Array;
  private readonly ys: Float64Array;
  /** The edges (by their first vertex's index) of each band; undefined for a short ring, scanned whole. */
  private readonly bands: Int32Array[] | undefined;
  private readonly bandHeight: number;

  constructor(ring: readonly Coordinate[]) {
    this.xs = new Float64Array(ring.length);
    this.ys = new Float64Array(ring.length);
    let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
    /** The sum of the edges' heights. */
    let spanned = 0;
    for (let index = 0; index < ring.length; index += 1) {
      const point = ring[index]!;
      const x = (this.xs[index] = point[0]!);
      const y = (this.ys[index] = point[1]!);
      minX = Math.min(minX, x);
      minY = Math.min(minY, y);
      maxX = Math.max(maxX, x);
      maxY = Math.max(maxY, y);
      if (index > 0) spanned += Math.abs(y - this.ys[index - 1]!);
    }
    [this.minX, this.minY, this.maxX, this.maxY] = [minX, minY, maxX, maxY];
    const edges = ring.length - 1;
    // As many bands as keep a few edges in each, but no more than keep the entries of tall edges (each listed
    // in every band it spans) within ENTRIES_PER_EDGE per edge.
    const height = maxY - minY;
    const byTallness = spanned > 0 ? Math.floor(((ENTRIES_PER_EDGE - 1) * edges * height) / spanned) : 1;
    const count = Math.max(1, Math.min(Math.ceil(edges / EDGES_PER_BAND), byTallness));
    this.bandHeight = height / count;
    this.bands = edges <= SCAN_EDGES || !(this.bandHeight > 0) ? undefined : this.sortIntoBands(count);
  }

  private bandOf(y: number, count: number): number {
    return Math.min(Math.floor((y - this.minY) / this.bandHeight), count - 1);
  }

  private sortIntoBands(count: number): Int32Array[] {
    const sizes = new Int32Array(count);
    const edges = this.ys.length - 1;
    const each = (visit: (band: number, edge: number) => void): void => {
      for (let edge = 0; edge < edges; edge += 1) {
        const [y1, y2] = [this.ys[edge]!, this.ys[edge + 1]!];
        const last = this.bandOf(Math.max(y1, y2), count);
        for (let band = this.bandOf(Math.min(y1, y2), count); band <= last; band += 1) visit(band, edge);
      }
    };
    each((band) => (sizes[band]! += 1));
    const bands = Array.from(sizes, (size) => new Int32Array(size));
    sizes.fill(0);
    each((band, edge) => (bands[band]![sizes[band]!++] = edge));
    return bands;
  }

  /** Whether the bounding box holds the point (its edges included). */
  boxHolds(x: number, y: number): boolean {
    return x >= this.minX && x <= this.maxX && y >= this.minY && y <= this.maxY;
  }

  /**
   * Where a point lies against the ring: inside 1, outside -1, on its boundary 0 (ray casting), and how many edges
   * were read to tell.
   */
  locate(x: number, y: number): { where: 1 | 0 | -1; edgesRead: number } {
    if (!this.boxHolds(x, y)) return { where: -1, edgesRead: 0 };
    const { xs, ys, bands } = this;
    const band = bands?.[this.bandOf(y, bands.length)];
    const edgesRead = band === undefined ? xs.length - 1 : band.length;
    let inside = false;
    for (let read = 0; read < edgesRead; read += 1) {
      const edge = band === undefined ? read : band[read]!;
      const x1 = xs[edge]!;
      const y1 = ys[edge]!;
      const x2 = xs[edge + 1]!;
      const y2 = ys[edge + 1]!;
      const cross = (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1);
      if (cross === 0 && x >= Math.min(x1, x2) && x <= Math.max(x1, x2) && y >= Math.min(y1, y2) && y <= Math.max(y1, y2)) {
        return { where: 0, edgesRead: read + 1 };
      }
      if (y1 > y !== y2 > y && x < ((x2 - x1) * (y - y1)) / (y2 - y1) + x1) inside = !inside;
    }
    return { where: inside ? 1 : -1, edgesRead };
  }
}
