/**
 * A typed number (an amount, a rate) as the API takes it: a number when it reads as one, else the
 * text as typed so the API's refusal names the field (the page does not second-guess the API's rules).
 */
export function numberOf(text: string): number | string {
  const trimmed = text.trim();
  const n = Number(trimmed);
  return trimmed !== "" && Number.isFinite(n) ? n : text;
}
