import { AdminError } from './admin-error.js';

/** A file part of a multipart form: its name as sent, its content type and its bytes. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  data: Buffer;
}

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

/** The value of `name` in a header's parameters (`form-data; name="a"; filename="b.jpg"`). */
function parameter(header: string, name: string): string | undefined {
  const match =
    new RegExp(`(?:^|;)\\s*${name}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(header) ??
    new RegExp(`(?:^|;)\\s*${name}=([^;\\s]+)`, 'i').exec(header);
  return match?.[1]?.replace(/\\(.)/g, '$1');
}

/**
 * Reads a `multipart/form-data` body (RFC 7578), as `addAttachment` and `updateAttachment` are sent: text fields as
 * strings and file parts as {@link UploadedFile}, by field name (the first of a repeated name). Throws a 400 for a body
 * that is not one.
 */
export function parseMultipart(body: Buffer, contentType: string): Record<string, string | UploadedFile> {
  const boundary = parameter(contentType, 'boundary');
  if (boundary === undefined || boundary === '') throw new AdminError(400, 'Invalid request: a multipart body needs a boundary.');
  const delimiter = Buffer.from(`--${boundary}`);
  const fields = Object.create(null) as Record<string, string | UploadedFile>;
  let start = body.indexOf(delimiter);
  if (start < 0) throw new AdminError(400, 'Invalid request: the multipart body has no part.');
  for (;;) {
    start += delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    if (body.subarray(start, start + 2).equals(CRLF)) start += 2;
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw new AdminError(400, 'Invalid request: the multipart body is not closed.');
    const part = body.subarray(start, next - CRLF.length);
    const split = part.indexOf(HEADERS_END);
    if (split < 0) throw new AdminError(400, 'Invalid request: a multipart part has no headers.');
    const headers = new Map(
      part
        .subarray(0, split)
        .toString('utf8')
        .split('\r\n')
        .map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const),
    );
    const disposition = headers.get('content-disposition') ?? '';
    const name = parameter(disposition, 'name');
    const data = Buffer.from(part.subarray(split + HEADERS_END.length));
    if (name !== undefined && !(name in fields)) {
      const filename = parameter(disposition, 'filename');
      fields[name] =
        filename === undefined
          ? data.toString('utf8')
          : { filename, contentType: headers.get('content-type') ?? 'application/octet-stream', data };
    }
    start = next;
  }
  return fields;
}
