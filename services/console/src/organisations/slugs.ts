import { randomBytes } from "node:crypto";

/** A URL-safe slug from a display name; `fallback` when nothing usable is left. */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return slug || fallback;
}

/**
 * Inserts with the first free slug: `base`, then `base-<6 hex>` while `insert` reports the slug
 * taken (an `ON CONFLICT DO NOTHING` that wrote no row). Returns the slug used.
 */
export async function withFreeSlug(base: string, insert: (slug: string) => Promise<boolean>): Promise<string> {
  let slug = base;
  for (let attempt = 0; ; attempt++) {
    if (await insert(slug)) return slug;
    if (attempt >= 5) throw new Error(`could not find a free slug for ${base}`);
    slug = `${base}-${randomBytes(3).toString("hex")}`;
  }
}
