/**
 * JSON read from the wire or a file, navigated freely by assertions: a wrong path fails the assertion that
 * reads it, so the compiler is not asked to know the shape.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one place tests opt out of typing JSON
export type Json = Record<string, any>;
