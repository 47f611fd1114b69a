export { BUILTIN_DETECTORS, isBuiltinDetector, type BuiltinDetector } from "./builtin-detectors";
export {
  ContentVerdict,
  CUSTOM_LABEL,
  FilterSet,
  patternProblem,
  type FilterAction,
  type FilterRule,
  type FilterSetDefinition,
} from "./content-filter";
