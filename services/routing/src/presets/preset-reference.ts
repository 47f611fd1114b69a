import { routing } from "@router/management-api";

/** Slug rule (product rule: lower-case letters, digits and hyphens, at most 64). */
export const PRESET_SLUG = routing.PRESET_SLUG;
export const MAX_PRESET_SLUG = routing.MAX_PRESET_SLUG;

export const PRESET_PREFIX = "@preset/";

/** What a request's `model` names when it is `@preset/<slug>` or `@preset/<slug>@<version>`. */
export interface PresetReference {
  slug: string;
  /** Null: the current version. */
  version: number | null;
  /** The reference as written. */
  text: string;
}

const REFERENCE = /^@preset\/([^@]*)(?:@(\d{1,9}))?$/;

/**
 * Reads a preset reference out of a `model` value; null when the value is not one (no `@preset/`
 * prefix). A value with the prefix that is malformed (bad slug, version 0 or not a number) is a
 * reference to nothing: it still parses, with a slug no preset can have, so the request gets the
 * same 404 as one naming a removed preset.
 */
export function parsePresetReference(model: string): PresetReference | null {
  const text = model.trim();
  if (!text.startsWith(PRESET_PREFIX)) return null;
  const match = REFERENCE.exec(text);
  const slug = match?.[1] ?? "";
  const version = match?.[2] === undefined ? null : Number(match[2]);
  if (!match || !PRESET_SLUG.test(slug) || version === 0) return { slug: "", version: null, text };
  return { slug, version, text };
}

export const presetReference = (slug: string): string => `${PRESET_PREFIX}${slug}`;
