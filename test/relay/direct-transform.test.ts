import jsonata from 'jsonata';
import t from 'tap';
import { directTransformOf, type TransformNode } from '../../src/relay/direct-transform.js';
import { compileTransform, TRANSFORM_MAX_DEPTH, TRANSFORM_MAX_STEPS } from '../../src/relay/transform.js';
import { changeUpdated } from '../helpers/relay-events.js';

const limits = { maxSteps: TRANSFORM_MAX_STEPS, maxDepth: TRANSFORM_MAX_DEPTH };
const directOf = (expression: string) => directTransformOf(jsonata(expression).ast() as TransformNode, limits);

/** Events whose values a path meets in every way: objects, null, text, arrays (empty, of one, nested), names of Object's prototype. */
const events: unknown[] = [
  changeUpdated({ after: { attributes: { objectid: 5, parcel_id: 'P-5', status: 'Closed', owner: null } } }),
  { after: null, before: 'text', changedFields: [], id: 7 },
  { after: { attributes: [{ status: 'a' }, { status: 'b' }] }, changedFields: ['status'] },
  { after: [{ attributes: { status: 'one' } }], changedFields: [['status']], id: { nested: [1, { x: 2 }] } },
  { constructor: 'own', after: { attributes: { toString: 1, hasOwnProperty: null } } },
  Object.assign(Object.create({ inherited: { status: 'x' } }) as object, { id: 'proto' }),
];

const expressions = [
  '{"id": id, "status": after.attributes.status, "owner": after.attributes.owner, "missing": after.nothing.here}',
  '{"changed": changedFields, "id": id, "2": 2, "1": "one", "t": true, "f": false, "n": null, "s": "text", "neg": -1.5}',
  '{"cloud": {"specversion": "1.0", "data": {"before": before.attributes, "after": after.attributes}}, "k": key}',
  '{"toString": after.attributes.toString, "has": after.attributes.hasOwnProperty, "c": constructor, "i": inherited.status}',
  '{"__proto__": id, "empty": {}}',
  '{}',
];

t.test('a transform of paths and literals gives what JSONata gives, or leaves the event to JSONata', async (t) => {
  for (const expression of expressions) {
    const direct = directOf(expression);
    t.ok(direct, `${expression} is evaluated directly`);
    for (const [index, data] of events.entries()) {
      const expected = JSON.stringify(await jsonata(expression).evaluate(data));
      const result = direct!(data);
      if (result === undefined) t.ok(JSON.stringify(data).includes('['), `event ${index} has an array along a path of ${expression}`);
      else t.equal(JSON.stringify(result), expected, `${expression} on event ${index}`);
    }
  }
  t.equal(directOf(expressions[0]!)!(events[2]), undefined, 'an array along a path is left to JSONata: it maps over its items');
});

t.test('every other expression is left to JSONata', (t) => {
  for (const expression of [
    '{"a": x & "y"}',
    '{"a": $string(x)}',
    '{"a": x[0]}',
    '{"a": x[]}',
    '{"a": $.x}',
    '{"a": [x]}',
    '{"a": x, "a": y}',
    '{"_jsonata_lambda": x}',
    '{x: y}',
    'after.attributes',
    '{"a": x}.a',
  ])
    t.equal(directOf(expression), undefined, expression.slice(0, 60));
  t.end();
});

t.test('a transform JSONata could stop at its bounds is left to JSONata, and keys written twice fail as JSONata says', async (t) => {
  const fields = (count: number): string => `{${Array.from({ length: count }, (_, i) => `"k${i}": a.b`).join(', ')}}`;
  t.ok(directOf(fields(100)), 'an object of 100 paths is evaluated directly');
  // JSONata evaluates an object's values at once: their depths add up against its bound of depth.
  t.equal(directOf(fields(TRANSFORM_MAX_DEPTH / 2)), undefined, `an object of ${TRANSFORM_MAX_DEPTH / 2} paths is not`);
  t.equal(directOf(fields(TRANSFORM_MAX_STEPS / 3)), undefined, 'nor one of more steps than a transform may take');
  await t.rejects(compileTransform('{"a": x, "a": y}', 'r')({ x: 1, y: 2 }, 'e1'), {
    code: 'GEOHOOK_ERR_RELAY_TRANSFORM',
    message: /JSONata D1009/,
  });
});
