export { BUILTIN_DETECTORS, type BuiltinDetector } from "./builtin-detectors";
export {
  ContentVerdict,
  FilterSet,
  patternProblem,
  type FilterAction,
  type FilterRule,
  type FilterSetDefinition,
} from "./content-filter";
