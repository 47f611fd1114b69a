import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";
import { toNanos, usdDecimal } from "@router/money";
import type { ExportRow } from "./export-rows";

/** The columns of the product's API (the service README), in its order. */
export const EXPORT_COLUMNS = [
  "created_at",
  "request_id",
  "client",
  "key",
  "requested_model",
  "served_model",
  "provider",
  "status",
  "error_code",
  "byok",
  "prompt_tokens",
  "completion_tokens",
  "billed_usd",
  "list_price_usd",
  "agent",
] as const;

/** The workspace the export names, with its current name from the gateway. */
export interface NamedWorkspace {
  id: string;
  name: string;
}

/**
 * One CSV record. `client` is the name the key's workspace had when the request was made; rows
 * recorded before events carried it take the named workspace's current name, else stay empty.
 * Amounts are exact decimal USD: billed (what the account was charged) and list (the tokens at
 * catalog list price).
 */
export function csvRecord(r: ExportRow, named: NamedWorkspace | undefined): (string | number)[] {
  const client = r.workspace_name ?? (named && named.id === r.workspace_id ? named.name : "");
  return [
    new Date(r.created_at).toISOString(),
    r.id,
    client,
    r.key_name ?? "",
    r.requested_model,
    r.served_model ?? "",
    r.provider_slug ?? "",
    r.status,
    r.error_code ?? "",
    // Written out: csv-stringify would turn booleans into "1" and "".
    r.is_byok ? "true" : "false",
    r.prompt_tokens,
    r.completion_tokens,
    usdDecimal(toNanos(r.billed_cost_nanodollars)),
    usdDecimal(toNanos(r.list_cost_nanodollars)),
    r.agent ?? "",
  ];
}

export interface CsvExport {
  /** Row batches, oldest first; fetched with one row more than `maxRows`, to tell truncation. */
  batches: AsyncIterator<ExportRow[]>;
  /** The first batch, already read (so a failing store is an error response, not a cut file). */
  first: IteratorResult<ExportRow[]>;
  maxRows: number;
  named?: NamedWorkspace;
}

/**
 * Writes the header, the rows and, past `maxRows`, a closing `# truncated` line to `out`, as the
 * store hands the rows over. csv-stringify quotes what needs quoting and prefixes a text cell a
 * spreadsheet would run as a formula (= + - @, tab, CR) with a single quote; numbers stay numbers.
 */
export async function writeCsvExport(e: CsvExport, out: Writable): Promise<void> {
  let truncated = false;
  async function* records(): AsyncGenerator<(string | number)[]> {
    let written = 0;
    try {
      for (let step = e.first; step.done !== true; step = await e.batches.next()) {
        for (const row of step.value) {
          if (written === e.maxRows) {
            truncated = true;
            return;
          }
          written += 1;
          yield csvRecord(row, e.named);
        }
      }
    } finally {
      // Stopped early (truncation, a client that left): closes the cursor.
      await e.batches.return?.();
    }
  }
  async function* closing(csv: AsyncIterable<string | Buffer>): AsyncGenerator<string | Buffer> {
    yield* csv;
    if (truncated) yield `# truncated: the export stops at ${e.maxRows} rows\n`;
  }
  await pipeline(
    Readable.from(records()),
    stringify({ header: true, columns: [...EXPORT_COLUMNS], escape_formulas: true }),
    closing,
    out,
  );
}
