import { exactMoney, money } from "./format";

/** An amount as `money` writes it, with the exact amount (to the nanodollar) on hover and for screen readers' descriptions. */
export function Money({ value, testId }: { value: number | null | undefined; testId?: string }) {
  if (value === null || value === undefined) return <span data-testid={testId}>none</span>;
  const shown = money(value);
  const full = exactMoney(value);
  return (
    <span data-testid={testId} title={full === shown ? undefined : full}>
      {shown}
    </span>
  );
}
