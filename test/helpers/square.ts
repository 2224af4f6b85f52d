/** A `size` × `size` square of Web Mercator with its lower left corner at (x, y), as an Esri polygon. */
export const square = (x: number, y = 0, size = 50) => ({
  rings: [
    [
      [x, y],
      [x, y + size],
      [x + size, y + size],
      [x + size, y],
      [x, y],
    ],
  ],
  spatialReference: { wkid: 102100 },
});
