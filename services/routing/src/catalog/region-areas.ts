/**
 * Where a cloud region is, as a policy names it. A cloud endpoint declares its own region
 * (`eu-central-1`, `europe-west4`, `swedencentral`); an organisation's "EU only" says `eu`. Both
 * must match it, so a cloud region also counts as the area whose law it is under. Only regions
 * inside the European Union count as `eu` (London and Zurich do not); a region missing here matches
 * by its own name only, which fails closed.
 */
const AREAS: Record<string, string> = {
  // Amazon Web Services
  "eu-central-1": "eu",
  "eu-west-1": "eu",
  "eu-west-3": "eu",
  "eu-north-1": "eu",
  "eu-south-1": "eu",
  "eu-south-2": "eu",
  "us-east-1": "us",
  "us-east-2": "us",
  "us-west-1": "us",
  "us-west-2": "us",
  // Google Cloud
  "europe-west1": "eu",
  "europe-west3": "eu",
  "europe-west4": "eu",
  "europe-west8": "eu",
  "europe-west9": "eu",
  "europe-west10": "eu",
  "europe-west12": "eu",
  "europe-north1": "eu",
  "europe-central2": "eu",
  "europe-southwest1": "eu",
  "us-central1": "us",
  "us-east1": "us",
  "us-east4": "us",
  "us-east5": "us",
  "us-south1": "us",
  "us-west1": "us",
  "us-west4": "us",
  // Microsoft Azure
  swedencentral: "eu",
  francecentral: "eu",
  germanywestcentral: "eu",
  westeurope: "eu",
  northeurope: "eu",
  italynorth: "eu",
  polandcentral: "eu",
  spaincentral: "eu",
  eastus: "us",
  eastus2: "us",
  westus: "us",
  westus3: "us",
  northcentralus: "us",
  southcentralus: "us",
  centralus: "us",
};

const NONE: readonly string[] = [];
const names = new Map<string, readonly string[]>();

/** The names a policy may use for an endpoint's region: the region itself and, for a known cloud region, its area. */
export function regionNames(region: string | null): readonly string[] {
  if (region === null) return NONE;
  let found = names.get(region);
  if (!found) {
    const area = AREAS[region];
    found = area ? [region, area] : [region];
    names.set(region, found);
  }
  return found;
}
