/**
 * The text of a body gathered in chunks: UTF-8, without a leading byte order mark, which is not
 * text (body-parser's decoder and undici's `text()` drop it too). Shared by the request bodies read
 * here and the provider answers the gateway reads whole.
 */
export function utf8Text(chunks: Buffer[], size: number): string {
  if (chunks.length === 0) return "";
  const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
  const start = size > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  return body.toString("utf8", start);
}
