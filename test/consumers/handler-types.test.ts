import t from 'tap';
import { subscribe } from '../../src/consumers/subscribe.js';
import type { ChangeEvent, EventHandlers, GpEvent, SubmissionEvent } from '../../src/index.js';

// Types of subscribe()'s handlers (issue 55). `tsc -p test` (npm run build:test) compiles this file: an expected
// error that does not come, or a check below that does not compile, fails the build.

/** True when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(proof: Equal<A, B>): Equal<A, B> => proof;

/** Never called: what it holds only has to compile, or not. */
function handlerTypes(handlers: EventHandlers): void {
  subscribe({
    handlers: {
      'change.submission': (event) => {
        same<typeof event, SubmissionEvent>(true);
        return event.related.length + event.attachments.length;
      },
      'change.*': (event) => same<typeof event, ChangeEvent>(true) && event.after,
      'change.updated': { changed: ['status'], handler: (event) => same<typeof event, ChangeEvent>(true) && event.changedFields },
      'gp.*': (event) => same<typeof event, GpEvent>(true) && event.payload,
    },
  });
  // @ts-expect-error a change.submission handler is handed a SubmissionEvent, which has no `after`
  subscribe({ handlers: { 'change.submission': (event) => event.after } });
  // @ts-expect-error a handler of ChangeEvent is no change.submission handler
  subscribe({ handlers: { 'change.submission': (event: ChangeEvent) => event } });
  // @ts-expect-error a change.submission handler takes no { changed }
  subscribe({ handlers: { 'change.submission': { changed: ['status'], handler: () => undefined } } });
  // @ts-expect-error no event type is named `bogus`
  subscribe({ handlers: { bogus: () => undefined } });
  // Handlers typed as EventHandlers, as before, are still taken.
  subscribe({ handlers });
}

t.test('subscribe() hands a change.submission handler a SubmissionEvent, and change.* still a ChangeEvent (compiled)', async (t) => {
  t.equal(typeof handlerTypes, 'function', 'the checks above compiled with tsc -p test');
});
