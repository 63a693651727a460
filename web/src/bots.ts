// AI players' names. The lobby names a bot "Bot <seat> (<level>)" in English
// (services/lobby/lounges.py); the client shows "Bot <seat>" in the player's language and the
// level as its own badge (which never truncates), from the seat's ai_level. Pure (no
// imports), so `npm test` runs it.

/** AiLevel's values (poker.events.v1.AiLevel) and their message keys' suffixes. */
export const LEVEL_NAMES: Record<number, "easy" | "normal" | "hard"> = { 1: "easy", 2: "normal", 3: "hard" };

/** The seat number of a lobby-made bot's name ("Bot 2 (normal)" -> 2), else null (a name
 * a person chose, or a bot renamed: shown as it is). */
export function botNumber(displayName: string): number | null {
  const m = /^Bot (\d{1,2}) \((easy|normal|hard)\)$/.exec(displayName);
  return m ? Number(m[1]) : null;
}

/**
 * A lounge name that is one of the defaults Felt's clients give (the web's English
 * "No-Limit Hold'em lounge", `felt play`'s "nlhe vs AI"): its variant and which default, so
 * it is shown in the player's language; null for a name a person chose (shown as written).
 */
export function defaultLoungeName(name: string): { variant: "nlhe" | "draw"; kind: "lounge" | "vsAi" } | null {
  const web = /^(No-Limit Hold'em|Five-Card Draw) lounge$/.exec(name);
  if (web) return { variant: web[1] === "Five-Card Draw" ? "draw" : "nlhe", kind: "lounge" };
  const cli = /^(nlhe|draw) vs AI$/.exec(name);
  if (cli) return { variant: cli[1] as "nlhe" | "draw", kind: "vsAi" };
  return null;
}
