import { BrandingPanel } from "../reports/branding-form";
import { ClientMonthPanel } from "../reports/client-month";
import type { Abilities } from "./abilities";

/** Client reports: the branding they carry and one client's month. */
export function ReportsSection({ can }: { can: Abilities }) {
  return (
    <section aria-labelledby="reports-heading">
      <h2 id="reports-heading" class="screen-only">
        Client reports
      </h2>
      <BrandingPanel canWrite={can.configure} />
      <ClientMonthPanel />
    </section>
  );
}
