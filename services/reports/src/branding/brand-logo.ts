import { imageSize } from "image-size";

/** Decoded logos must be smaller than this: "under 150 KB", with a KB of 1024 bytes. */
export const MAX_LOGO_BYTES = 150 * 1024;

/** The two image types a logo may be, by their data-URI media type and image-size's name for them. */
const LOGO_TYPES = { "image/png": "png", "image/jpeg": "jpg" } as const;
type LogoMediaType = keyof typeof LOGO_TYPES;

// The one form accepted: `data:image/png;base64,<base64>` or the same with image/jpeg (scheme and
// media type in any letter case, as RFC 2397 allows). No other parameters, no percent-encoding.
const LOGO_URI = /^data:(image\/png|image\/jpeg);base64,([A-Za-z0-9+/]*={0,2})$/i;
const ANY_DATA_URI = /^data:([^;,]*)/i;

export type LogoCheck = { ok: true; dataUri: string } | { ok: false; reason: string };

const refuse = (reason: string): LogoCheck => ({ ok: false, reason });

/** Why a text that is not the accepted form was refused, as precisely as its start tells. */
function formRefusal(text: string): LogoCheck {
  const declared = ANY_DATA_URI.exec(text)?.[1]?.toLowerCase();
  if (declared === undefined) {
    return refuse("must be a data: URI (data:image/png;base64,... or data:image/jpeg;base64,...); nothing is fetched from a URL");
  }
  if (declared.startsWith("image/svg")) return refuse("SVG images are refused; use a PNG or JPEG");
  if (declared !== "image/png" && declared !== "image/jpeg") return refuse(`must be a PNG or JPEG image, not ${declared || "untyped data"}`);
  return refuse("must be base64 data in the form data:<image/png|image/jpeg>;base64,<data>");
}

/** What the decoded bytes are, by their content (image-size reads the headers, not the label). */
function sniff(bytes: Buffer): string {
  try {
    return imageSize(bytes).type ?? "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * Checks a logo by its bytes: a PNG or JPEG data URI whose decoded content really is an image of
 * the declared type (an SVG or anything else labelled image/png is refused) and smaller than
 * `MAX_LOGO_BYTES`. Returns the canonical data URI to store.
 */
export function checkLogo(text: string): LogoCheck {
  const m = LOGO_URI.exec(text);
  if (!m) return formRefusal(text);
  const mediaType = (m[1] ?? "").toLowerCase() as LogoMediaType;
  const base64 = m[2] ?? "";
  if (base64.length % 4 === 1) return refuse("is not valid base64");
  const bytes = Buffer.from(base64, "base64");
  if (bytes.length === 0) return refuse("holds no image data");
  if (bytes.length >= MAX_LOGO_BYTES) {
    return refuse(`must be under 150 KB (${MAX_LOGO_BYTES} bytes) once decoded; this one is ${bytes.length} bytes`);
  }
  const found = sniff(bytes);
  if (found !== LOGO_TYPES[mediaType]) {
    const what = found === "svg" ? "an SVG image" : found === "unknown" ? "not a readable image" : `a ${found} image`;
    return refuse(`is labelled ${mediaType} but its bytes are ${what}; only PNG and JPEG are accepted`);
  }
  return { ok: true, dataUri: `data:${mediaType};base64,${bytes.toString("base64")}` };
}
