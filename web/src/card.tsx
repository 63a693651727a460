// One playing card: face up with rank and suit (named in full for screen readers), or its
// back when the viewer may not see it.
import type { Card as CardMsg } from "./gen/poker/events/v1/events_pb";
import { t, type Key } from "./i18n";
import { RANKS, SUIT_SYMBOLS } from "./cards";

/** `win`: one of the five cards that won the pot (highlighted at showdown). */
export function CardView({ card, small, selected, onToggle, win }: { card: CardMsg; small?: boolean; selected?: boolean; onToggle?: () => void; win?: boolean }) {
  if (card.kind.case !== "code") {
    return <span class={small ? "card back small" : "card back"} role="img" aria-label={t("card.hidden")} />;
  }
  const code = card.kind.value;
  const rank = RANKS[code >> 2];
  const suit = code & 3;
  const label = t("card.name", { rank: t(`rank.${rank}` as Key), suit: t(`suit.${"cdhs"[suit]}` as Key) });
  const cls = `card ${suit === 1 || suit === 2 ? "red" : "black"}${small ? " small" : ""}${selected ? " selected" : ""}${win ? " win" : ""}`;
  const face = (
    <>
      <span class="rank">{rank === "T" ? "10" : rank}</span>
      <span class="suit">{SUIT_SYMBOLS[suit]}</span>
    </>
  );
  if (onToggle) {
    return (
      <button type="button" class={cls} aria-pressed={selected} aria-label={label} data-testid="discard-card" onClick={onToggle}>
        {face}
      </button>
    );
  }
  return (
    <span class={cls} role="img" aria-label={win ? `${label} (${t("card.winning")})` : label} data-win={win ? "true" : undefined}>
      {face}
    </span>
  );
}
