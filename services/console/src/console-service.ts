import type { Db } from "@router/db";
import { DomainError } from "@router/errors";
import { unaryHandler, type GrpcService } from "@router/grpc-kit";
import type { Logger } from "@router/logging";
import type { Clock } from "@router/money";
import { findKeyByHash, type StoredKey } from "./keys/key-store";
import { getOrganisation } from "./organisations/organisation-store";
import { getWorkspace } from "./organisations/workspace-store";
import { applyRunawayFlag } from "./runaway/runaway-pauses";
import { findSession, type StoredSession } from "./sessions/session-store";
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
export function consoleGrpcService(deps: { db: Db; log: Logger; clock: Clock }): GrpcService {
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
    findKey: unaryHandler(async (req: consoleRpc.FindKeyRequest) => {
      const key = await findKeyByHash(deps.db, req.hash);
      return { key: key ? keyRecord(key) : undefined };
    }, deps.log),
    findSession: unaryHandler(async (req: consoleRpc.FindSessionRequest) => {
      const session = await findSession(deps.db, req.tokenHash);
      return { session: session ? sessionRecord(session) : undefined };
    }, deps.log),
    findWorkspace: unaryHandler(async (req: consoleRpc.FindWorkspaceRequest) => {
      const workspace = await getWorkspace(deps.db, req.orgId, req.workspaceId);
      return { workspace: workspace ? { id: workspace.id, name: workspace.name } : undefined };
    }, deps.log),
    organisationName: unaryHandler(async (req: consoleRpc.OrganisationNameRequest) => {
      const organisation = await getOrganisation(deps.db, req.orgId);
      return { name: organisation?.name };
    }, deps.log),
    applyRunawayFlag: unaryHandler(async (req: consoleRpc.ApplyRunawayFlagRequest) => {
      if (!req.flagId || !req.orgId || !req.keyHash) throw new DomainError("invalid_request", "flag_id, org_id and key_hash are required");
      return { result: await applyRunawayFlag(deps.db, req, deps.clock.now()) };
    }, deps.log),
  };
  return { definition: consoleRpc.ConsoleServiceService, implementation };
}

const ms = (d: Date | null): bigint | undefined => (d ? BigInt(d.getTime()) : undefined);

/** A key as the gateway authenticates with it (`KeyRecord`): unset fields are nulls. */
function keyRecord(k: StoredKey): consoleRpc.KeyRecord {
  return {
    hash: k.hash,
    prefix: k.prefix,
    orgId: k.orgId,
    operator: k.operator,
    workspaceId: k.workspaceId ?? undefined,
    workspaceName: k.workspaceName ?? undefined,
    name: k.name ?? undefined,
    label: k.label ?? undefined,
    class: k.class,
    limitNanodollars: k.limitNanos ?? undefined,
    limitReset: k.limitReset ?? undefined,
    limitMode: k.limitMode,
    includeByokInLimit: k.includeByokInLimit,
    paused: k.paused,
    pausedReason: k.pausedReason ?? undefined,
    disabled: k.disabled,
    expiresAtMs: ms(k.expiresAt),
    userId: k.userId ?? undefined,
    userRole: k.userRole ?? undefined,
  };
}

function sessionRecord(s: StoredSession): consoleRpc.SessionRecord {
  return {
    tokenHash: s.tokenHash,
    orgId: s.orgId,
    operator: s.operator,
    userId: s.userId ?? undefined,
    keyHash: s.keyHash ?? undefined,
    authMethod: s.authMethod,
    expiresAtMs: BigInt(s.expiresAt.getTime()),
    endedAtMs: ms(s.endedAt),
    seatRole: s.seatRole ?? undefined,
    keyName: s.keyName ?? undefined,
    keyWorkspaceId: s.keyWorkspaceId ?? undefined,
    keyDisabled: s.keyDisabled,
    chargeWorkspaceId: s.chargeWorkspaceId ?? undefined,
    chargeWorkspaceName: s.chargeWorkspaceName ?? undefined,
  };
}
