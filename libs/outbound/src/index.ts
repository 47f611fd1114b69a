export { AllowedHosts, addressRange, isPublicAddress, isIpLiteral } from "./addresses";
export { checkTargetUrl, targetUrlProblem, MAX_TARGET_URL_LENGTH } from "./target-url";
export {
  SIGNATURE_HEADER,
  DEFAULT_SIGNATURE_TOLERANCE_S,
  newSigningSecret,
  signatureHeaderValue,
  verifySignature,
} from "./signature";
export { guardedLookup, systemResolve, RefusedAddressError, type Resolve } from "./guarded-lookup";
export {
  Outbound,
  type OutboundMessage,
  type OutboundOptions,
  type OutboundStats,
  type DeliveryOutcome,
  type DeliveryStatus,
} from "./outbound";
export { outboundEnvironment, outboundOptionsOf } from "./environment";
