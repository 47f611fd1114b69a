import { useState } from "preact/hooks";

/** Copies `text` to the clipboard and says so (falls back to selecting it where the clipboard is closed). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <>
      <button type="button" onClick={() => void copy()} aria-label={label}>
        Copy
      </button>
      <span role="status" class="hint">
        {state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select the text and copy it" : ""}
      </span>
    </>
  );
}
