import { toUsd } from "@router/money";
import type { CreditPolicy } from "./credit-policy";
import type { CreditBalance, Purchase } from "./credit-store";
import type { PurchaseDocument } from "./payment-processor";

/** The balance fields (USD): `available_credits` is what in-flight holds leave of the total. */
export function balanceView(b: CreditBalance) {
  return {
    total_credits: toUsd(b.total),
    held_credits: toUsd(b.held),
    available_credits: toUsd(b.total - b.held),
    credit_line: toUsd(b.creditLine),
  };
}

export function feeScheduleView(policy: CreditPolicy, configured: boolean) {
  return {
    fee_bps: policy.feeBps,
    fee_min: toUsd(policy.feeMin),
    min_purchase: toUsd(policy.minPurchase),
    configured,
    purchasable: policy.purchasable,
  };
}

/** A purchase row; only a paid one has an invoice or a receipt at the processor. */
export function purchaseView(p: Purchase) {
  return {
    id: p.id,
    created_at: p.createdAt.toISOString(),
    provider: p.provider,
    status: p.status,
    gross: toUsd(p.gross),
    fee: toUsd(p.fee),
    net: toUsd(p.net),
    tax_jurisdiction: p.taxJurisdiction,
    has_document: p.status === "paid",
  };
}

export function documentView(d: PurchaseDocument) {
  return { kind: d.kind, url: d.url, pdf_url: d.pdfUrl, number: d.number };
}
