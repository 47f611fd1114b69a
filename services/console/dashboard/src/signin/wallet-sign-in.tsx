import { api } from "../api/client";
import { ErrorNotice, useAction } from "../ui/async";

/** An injected EIP-1193 wallet (the browser extension's `window.ethereum`). */
interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

/** Sign-In with Ethereum: the gateway's challenge, signed by the wallet, verified by the gateway. */
export function WalletSignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const action = useAction();
  const wallet = (window as unknown as { ethereum?: Eip1193 }).ethereum;
  const signIn = async () => {
    const ok = await action.run(async () => {
      if (!wallet) throw new Error("No wallet found in this browser. Install or unlock one, then try again.");
      const [address] = (await wallet.request({ method: "eth_requestAccounts" })) as string[];
      if (!address) throw new Error("The wallet shared no account.");
      const challenge = await api.post<{ message: string; nonce: string }>("/v1/auth/wallet/challenge", { address });
      const signature = (await wallet.request({ method: "personal_sign", params: [challenge.message, address] })) as string;
      await api.post("/v1/auth/wallet/verify", { address, signature, nonce: challenge.nonce });
    });
    if (ok) onSignedIn();
  };
  return (
    <section class="card" aria-labelledby="wallet-heading">
      <h2 id="wallet-heading">Wallet</h2>
      <p class="hint">Sign a one-time message with your wallet; nothing is sent on chain.</p>
      <ErrorNotice error={action.error} />
      <button type="button" disabled={action.busy} onClick={() => void signIn()}>
        {action.busy ? "Waiting for the wallet…" : "Sign in with a wallet"}
      </button>
    </section>
  );
}
