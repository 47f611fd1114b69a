import type { ComponentChildren } from "preact";

/** A table that scrolls sideways on a narrow screen, with column headers; the rows are the caller's `<tr>`s. */
export function Table({ headers, caption, testId, children }: { headers: string[]; caption?: string; testId?: string; children: ComponentChildren }) {
  return (
    <div class="scroll" tabIndex={0}>
      <table data-testid={testId}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {headers.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
