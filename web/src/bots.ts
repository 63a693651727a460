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
