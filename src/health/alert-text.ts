/**
 * The characters a name keeps in an alert's text: letters, digits, spaces and `_ - . /`, all that service,
 * folder and hook names (and a scope, `<hook> <folder>/<name>.<type>`) are made of.
 */
const NAME_CHARACTER = /[\p{L}\p{N} _./-]/u;

/** Control characters (C0, DEL, C1) and the Unicode line separators: an alert is one line. */
const CONTROL = /[\p{Cc}\u2028\u2029]/gu;

/** `name` with every character a name is not made of turned into `?`: no markup, mention or escape sequence survives. */
export function plainName(name: string): string {
  return Array.from(name, (character) => (NAME_CHARACTER.test(character) ? character : '?')).join('');
}

/**
 * The `text` of an alert as it is sent: the `service` it names (which may come from a delivery) shown as a
 * {@link plainName}, control characters removed, and `&`, `<`, `>` escaped as Slack asks (`&amp;`, `&lt;`,
 * `&gt;`), so that the line can neither mention a channel, nor link, nor format a Slack or Teams message.
 */
export function alertText(text: string, service: string): string {
  const named = service === '' ? text : text.split(service).join(plainName(service));
  return named.replace(CONTROL, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
