import { ledger } from "@router/management-api";

/** The ids Open answers: `run_` and 24 hex digits (checked loosely, so older ids stay readable). */
export const RUN_ID = /^run_[0-9A-Za-z]{1,64}$/;
export const MAX_GOAL_CHARS = ledger.MAX_GOAL_CHARS;
export const RUNS_PAGE_MAX = ledger.RUNS_PAGE_MAX;

/** The bodies and the list query as the API description gives them (@router/management-api). */
export const openRunBody = ledger.openRunBody;
export const closeRunBody = ledger.closeRunBody;
export const listRunsQuery = ledger.listRunsQuery;
