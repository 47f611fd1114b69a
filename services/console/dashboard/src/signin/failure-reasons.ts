/** What each `/signin?error=<reason>` of the identity-provider redirect means, in words. */
export const SIGN_IN_FAILURES: Record<string, string> = {
  cancelled: "Sign-in was cancelled at the identity provider. Nothing was changed; try again when you are ready.",
  provider_error: "The identity provider reported an error and did not sign you in. Try again, or use another method.",
  expired: "The sign-in took longer than ten minutes, or started in another browser. Start again.",
  state_mismatch: "This sign-in could not be matched to one started in this browser, so it was refused. Start again from this page.",
  no_code: "The identity provider returned without a sign-in code. Start again.",
  not_configured: "That identity provider is not offered by this deployment.",
  exchange_failed: "The identity provider's answer could not be verified. Try again in a moment.",
};

export const PROVIDER_NAMES: Record<string, string> = { google: "Google", oidc: "your organisation's single sign-on" };
