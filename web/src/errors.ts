// A refusal as a sentence in the player's language: by its ErrorInfo reason when the
// server gave one (every reason has an "error.<REASON>" message), else by its status code.
import { reasonOf, codeOf } from "./api";
import { t, tDynamic } from "./i18n";

export function errorText(err: unknown): string {
  const reason = reasonOf(err);
  if (reason) return tDynamic(`error.${reason}`, t("error.unknown", { reason }));
  return tDynamic(`code.${codeOf(err)}`, t("code.unknown"));
}
