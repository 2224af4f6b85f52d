import type { Logger } from 'pino';

/**
 * A route's state changes said in one line each (in `geohook up`'s terminal as in the logs), never one per try:
 * its first failed try (and each new cause while failing), its first dead letter of the episode, and its next
 * delivery, which ends the episode with the count of its failed tries and dead letters. The tries in between are
 * at debug; `geohook relay status` shows them, with the next try's time.
 */
export class RelayRouteLines {
  readonly #log: Logger;
  readonly #route: string;
  #cause: string | undefined;
  #failedTries = 0;
  #deadLetters = 0;

  constructor(logger: Logger, route: string) {
    this.#log = logger;
    this.#route = route;
  }

  /** A try failed because of `cause`. */
  failed(cause: string): void {
    this.#failedTries += 1;
    if (cause === this.#cause) return;
    const first = this.#cause === undefined;
    this.#cause = cause;
    this.#log.warn(
      { failed: cause },
      first
        ? `route ${this.#route} failing: ${cause}; its events wait for their next try (geohook relay status shows when)`
        : `route ${this.#route} still failing, another cause: ${cause}`,
    );
  }

  /** An event used every try: a dead letter of the route. */
  deadLetter(eventId: string | undefined, cause: string, tries: number): void {
    this.#deadLetters += 1;
    if (this.#deadLetters > 1) {
      this.#log.debug({ eventId, failed: cause, tries }, 'relay dead letter');
      return;
    }
    this.#log.warn(
      { eventId, failed: cause, tries },
      `route ${this.#route}: an event used its ${tries} tries and is a dead letter (geohook relay replay --name ${this.#route} sends it again); others until the route delivers are counted, not printed`,
    );
  }

  /** A try was delivered: the end of a failing episode is said once. */
  delivered(): void {
    if (this.#cause === undefined && this.#deadLetters === 0) return;
    const deadLetters = this.#deadLetters === 0 ? '' : `, ${this.#deadLetters} dead letter${this.#deadLetters === 1 ? '' : 's'}`;
    this.#log.info(
      { failedTries: this.#failedTries, deadLetters: this.#deadLetters },
      `route ${this.#route} delivers again (after ${this.#failedTries} failed tr${this.#failedTries === 1 ? 'y' : 'ies'}${deadLetters})`,
    );
    this.#cause = undefined;
    this.#failedTries = 0;
    this.#deadLetters = 0;
  }
}
