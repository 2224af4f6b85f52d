import fc from 'fast-check';
import {
  ALPHABETS,
  CONTRACT_PREFIXES,
  OTHER_PREFIXES,
  type DataTweak,
  type KeyTweak,
  type Noise,
  type SignatureRecipe,
} from './signatures.js';

/** Printable ASCII (what any HTTP client can send in a header), or any UTF-16 for in-process calls. */
export type Charset = 'ascii' | 'any';

const printable = (charset: Charset): fc.Arbitrary<string> =>
  charset === 'ascii'
    ? fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code))
    : fc.string({ unit: 'binary', minLength: 1, maxLength: 1 });

/** Keys: ASCII, non-ASCII (UTF-8 bytes differ from Latin-1 and UTF-16), generated ones, and longer than SHA-256's 64-byte block. */
export const keyArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 24 }) },
  fc.constantFrom('clé-secrète', 'ключ', '鍵🔑', 'Ünïcödé', '\u00ff\u0100', ' '),
  fc.constantFrom(
    ...fc.sample(fc.uint8Array({ minLength: 32, maxLength: 32 }), 8).map((bytes) => Buffer.from(bytes).toString('base64url')),
  ),
  fc.string({ minLength: 1, maxLength: 6 }).map((unit) => unit.repeat(Math.ceil(70 / unit.length))),
);

const noiseArb = (charset: Charset): fc.Arbitrary<Noise> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
    fc.constantFrom(...(['upper', 'lower', 'whitespace', 'twice', 'listed', 'plusToSpace'] as const)).map((kind) => ({ kind })),
    fc.record({ kind: fc.constantFrom('swapCase' as const, 'delete' as const), at: fc.nat({ max: 200 }) }),
    fc.record({
      kind: fc.constantFrom('replace' as const, 'insert' as const),
      at: fc.nat({ max: 200 }),
      char: fc.oneof(fc.constantFrom(...'AQgw09+/-_=%. '), printable(charset)),
    }),
    fc.record({ kind: fc.constant('truncate' as const), count: fc.integer({ min: 1, max: 40 }) }),
    fc.record({ kind: fc.constant('append' as const), text: fc.string({ unit: printable(charset), minLength: 1, maxLength: 8 }) }),
  );

/** Recipes: half of them right in a contract spelling, the rest every way of getting it wrong. */
export const recipeArb = (charset: Charset): fc.Arbitrary<SignatureRecipe> =>
  fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({
        signer: fc.record({ kind: fc.constant('hook' as const), index: fc.nat({ max: 3 }) }),
        data: fc.constant({ tweak: 'same' as const, at: 0 }),
        algorithm: fc.constant('sha256' as const),
        digest: fc.constant({ kind: 'none' as const }),
        alphabet: fc.constantFrom(...ALPHABETS),
        noise: fc.constant({ kind: 'none' as const }),
        prefix: fc.constantFrom(...CONTRACT_PREFIXES),
        url: fc.constantFrom('none' as const, 'whole' as const),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        signer: fc.oneof(
          { weight: 3, arbitrary: fc.record({ kind: fc.constant('hook' as const), index: fc.nat({ max: 3 }) }) },
          fc.record({ kind: fc.constant('other' as const), key: keyArb }),
          fc.record({
            kind: fc.constant('near' as const),
            index: fc.nat({ max: 3 }),
            tweak: fc.constantFrom<KeyTweak>(
              'swapCase',
              'trailingSpace',
              'trailingNewline',
              'dropLast',
              'appendX',
              'latin1',
              'utf16le',
              'hexOfKey',
            ),
          }),
        ),
        data: fc.record({
          tweak: fc.oneof(
            { weight: 4, arbitrary: fc.constant<DataTweak>('same') },
            fc.constantFrom<DataTweak>('flipBit', 'dropLast', 'appendNewline', 'empty', 'doubled', 'reserialised', 'crlf'),
          ),
          at: fc.nat({ max: 4096 }),
        }),
        algorithm: fc.oneof(
          { weight: 6, arbitrary: fc.constant('sha256' as const) },
          fc.constantFrom('sha1' as const, 'sha512' as const, 'md5' as const, 'plain-sha256' as const),
        ),
        digest: fc.oneof(
          { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
          fc.constantFrom({ kind: 'zero' as const }, { kind: 'random' as const }),
          fc.record({ kind: fc.constant('flip' as const), at: fc.nat({ max: 31 }), bit: fc.nat({ max: 7 }) }),
          fc.record({ kind: fc.constant('truncate' as const), length: fc.nat({ max: 31 }) }),
          fc.record({ kind: fc.constant('extend' as const), extra: fc.integer({ min: 1, max: 32 }) }),
        ),
        alphabet: fc.constantFrom(...ALPHABETS),
        noise: noiseArb(charset),
        prefix: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...CONTRACT_PREFIXES) }, fc.constantFrom(...OTHER_PREFIXES)),
        url: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom('none' as const, 'whole' as const) },
          fc.constantFrom('double' as const, 'partial' as const, 'lowerEscapes' as const),
        ),
      }),
    },
  );

/** Values made without any digest: random text, well-formed random digests, empty and huge ones. All forgeries. */
export const forgedValueArb = (charset: Charset, maxHugeLength: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: printable(charset), maxLength: 120 }) },
    { weight: 3, arbitrary: fc.stringMatching(/^(sha256=)?[A-Za-z0-9+/]{43}=$/) },
    { weight: 3, arbitrary: fc.stringMatching(/^(sha256=)?[A-Za-z0-9_-]{43}$/) },
    { weight: 3, arbitrary: fc.stringMatching(/^(sha256=)?[0-9a-fA-F]{64}$/) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'sha256=',
        'sha256=%',
        '%',
        '%E0%A4%A',
        '%25',
        'sha256%3D',
        '=',
        '==',
        'null',
        'undefined',
        '0',
        'true',
        '[]',
        '{}',
        'sha256=sha256=',
        '\t',
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom('A', '=', '%41', 'sha256=', '0', '+/', '%'),
          fc.integer({ min: Math.min(1_000, maxHugeLength), max: maxHugeLength }),
        )
        .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length))),
    },
  );
