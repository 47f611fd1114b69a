import type { Db } from "@router/db";
import { unaryHandler, type GrpcService } from "@router/grpc-kit";
import type { Logger } from "@router/logging";
import { consoleRpc } from "@router/proto";
import { loadLogging } from "./logging-settings/logging-store";
import { enabledSealedCredentials, recordCredentialUse } from "./credentials/credential-store";

/** The most uses one RecordCredentialUses call may carry (a gateway sends one per credential it used since its last flush). */
const MAX_USES = 10_000;

/**
 * What the data plane asks of the console (`ConsoleService`): an organisation's enabled provider
 * credentials, sealed as stored (only the gateway, which dispatches with them, opens them), when each
 * last served, and the keys its content-logging settings exclude.
 */
export function consoleGrpcService(deps: { db: Db; log: Logger }): GrpcService {
  const implementation: consoleRpc.ConsoleServiceServer = {
    organisationCredentials: unaryHandler(async (req: consoleRpc.OrganisationCredentialsRequest) => {
      const rows = await enabledSealedCredentials(deps.db, req.orgId);
      return {
        credentials: rows.map((c) => ({
          id: c.id,
          orgId: c.orgId,
          providerSlug: c.providerSlug,
          tier: c.tier,
          priority: c.priority,
          fallbackPolicy: c.fallbackPolicy,
          modelFilterJson: JSON.stringify(c.modelFilter),
          settingsJson: JSON.stringify(c.settings),
          key: {
            ciphertext: c.sealed.ciphertext,
            iv: c.sealed.iv,
            tag: c.sealed.tag,
            dekCiphertext: c.sealed.wrappedKey,
            dekIv: c.sealed.wrappedKeyIv,
            dekTag: c.sealed.wrappedKeyTag,
            kekVersion: c.sealed.kekVersion,
          },
        })),
      };
    }, deps.log),
    recordCredentialUses: unaryHandler(async (req: consoleRpc.RecordCredentialUsesRequest) => {
      const uses = new Map<string, Date>();
      for (const u of req.uses.slice(0, MAX_USES)) {
        const at = new Date(Number(u.usedAtMs));
        const seen = uses.get(u.credentialId);
        if (u.credentialId && !Number.isNaN(at.getTime()) && (!seen || seen < at)) uses.set(u.credentialId, at);
      }
      await recordCredentialUse(deps.db, uses);
      return {};
    }, deps.log),
    loggingSettings: unaryHandler(async (req: consoleRpc.LoggingSettingsRequest) => {
      const settings = await loadLogging(deps.db, req.orgId);
      return { keyExclude: settings.keyExclude };
    }, deps.log),
  };
  return { definition: consoleRpc.ConsoleServiceService, implementation };
}
