/** Constants the case servers and the bench share (the case files themselves start servers on import). */

/** The queue the naive receiver fills. */
export const NAIVE_QUEUE = 'naive-events';

/** geohook's log level in the bench: `warn`, so that it writes no line per delivery, as the other cases. */
export const GEOHOOK_LOG_LEVEL = 'warn';
