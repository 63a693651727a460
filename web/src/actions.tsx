// The seat's turn: only the actions the server listed as legal, with bet sizes limited to
// its [min_to, max_to]. Presets (min, half pot, pot, all-in) are clamped to that range;
// Draw's discard picks 0 to max_discards of the seat's own cards. The amount can be typed
// too, and keys act (betting.ts's SHORTCUTS: f fold, c check/call, r bet/raise, a all-in,
// 1-3 sizes), never while the player types in a field. The bar is keyed by the legal actions
// (table.tsx), so the size starts over at the new minimum on each turn.
import { useEffect, useState } from "preact/hooks";
import { clamp, parseAmount, shortcutOf } from "./betting";
import { t, chips } from "./i18n";
import { CardView } from "./card";
import { ActionType, type TableView, type LegalAction, type Action } from "./gen/poker/v1/table_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ActionSchema } from "./gen/poker/v1/table_pb";

type ActionInit = MessageInitShape<typeof ActionSchema>;

export function ActionBar({ view, seat, busy, onAct }: { view: TableView; seat: number; busy: boolean; onAct: (a: ActionInit) => void }) {
  const hand = view.hand!;
  const legal = new Map<ActionType, LegalAction>(hand.legalActions.map((a) => [a.type, a]));
  const discard = legal.get(ActionType.DISCARD);
  if (discard) return <DiscardBar view={view} seat={seat} max={discard.maxDiscards} busy={busy} onAct={onAct} />;

  const me = hand.seats.find((s) => s.seat === seat);
  const sizing = legal.get(ActionType.RAISE) ?? legal.get(ActionType.BET);
  const allIn = legal.get(ActionType.ALL_IN);
  const call = legal.get(ActionType.CALL);
  const pot = hand.pots.reduce((n, p) => n + p.amount, 0n) + hand.seats.reduce((n, s) => n + s.bet, 0n);
  const toCall = hand.currentBet - (me?.bet ?? 0n);
  const lo = sizing?.minTo ?? 0n;
  const hi = sizing?.maxTo ?? 0n;
  const [amount, setAmount] = useState(lo);
  const value = clamp(amount, lo, hi);
  const [typed, setTyped] = useState<string | null>(null);
  // A pot-sized raise: call, then raise by the pot after the call.
  const potTo = (fraction: bigint) => hand.currentBet + ((pot + toCall) * fraction) / 2n;

  const sized = (to: bigint): ActionInit => {
    if (allIn && me && to >= me.stack + me.bet) return { kind: { case: "allIn", value: {} } };
    return sizing!.type === ActionType.RAISE ? { kind: { case: "raiseTo", value: { amount: to } } } : { kind: { case: "betTo", value: { amount: to } } };
  };

  const fold = () => onAct({ kind: { case: "fold", value: {} } });
  const check = () => onAct({ kind: { case: "check", value: {} } });
  const callIt = () => onAct({ kind: { case: "call", value: {} } });
  const raise = () => onAct(sized(value));
  const pick = (v: bigint) => {
    setTyped(null);
    setAmount(clamp(v, lo, hi));
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (busy) return;
      const s = shortcutOf(e.key, e.target as HTMLElement | null, { ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey });
      if (!s) return;
      const done = () => e.preventDefault();
      if (s === "fold" && legal.has(ActionType.FOLD)) return done(), fold();
      if ((s === "call" || s === "check") && legal.has(ActionType.CHECK)) return done(), check();
      if (s === "call" && call) return done(), callIt();
      if (s === "raise" && sizing) return done(), raise();
      if (s === "allIn" && allIn) return done(), onAct({ kind: { case: "allIn", value: {} } });
      if (sizing && lo < hi && (s === "min" || s === "halfPot" || s === "pot")) return done(), pick(s === "min" ? lo : potTo(s === "halfPot" ? 1n : 2n));
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  });

  return (
    <fieldset class="action-bar" disabled={busy} aria-busy={busy} aria-label={t("action.yourTurn")} data-testid="actions">
      <div class="row main-actions">
        {legal.has(ActionType.FOLD) && (
          <button class="danger" data-testid="act-fold" aria-keyshortcuts="F" title={t("action.key", { key: "F" })} onClick={fold}>{t("action.fold")}</button>
        )}
        {legal.has(ActionType.CHECK) && (
          <button class="secondary" data-testid="act-check" aria-keyshortcuts="C" title={t("action.key", { key: "C" })} onClick={check}>{t("action.check")}</button>
        )}
        {call && (
          <button class="secondary" data-testid="act-call" aria-keyshortcuts="C" title={t("action.key", { key: "C" })} onClick={callIt}>{t("action.call", { amount: chips(call.amount) })}</button>
        )}
        {sizing && (
          <button class="primary" data-testid="act-raise" aria-keyshortcuts="R" title={t("action.key", { key: "R" })} onClick={raise}>
            {t(sizing.type === ActionType.RAISE ? "action.raiseTo" : "action.betTo", { amount: chips(value) })}
          </button>
        )}
        {!sizing && allIn && (
          <button class="primary" data-testid="act-allin" aria-keyshortcuts="A" title={t("action.key", { key: "A" })} onClick={() => onAct({ kind: { case: "allIn", value: {} } })}>{t("action.allInFor", { amount: chips(allIn.amount) })}</button>
        )}
      </div>
      {sizing && lo < hi && (
        <div class="sizing">
          <input
            type="range"
            min={Number(lo)}
            max={Number(hi)}
            value={Number(value)}
            aria-label={t("action.amount")}
            aria-valuetext={chips(value)}
            data-testid="bet-slider"
            onInput={(e) => pick(BigInt((e.target as HTMLInputElement).value))}
          />
          <label class="amount">
            <span class="sr-only">{t("action.amount")}</span>
            <input
              type="text"
              inputMode="numeric"
              maxLength={20}
              data-testid="bet-amount"
              value={typed ?? String(value)}
              aria-describedby="bet-range"
              onInput={(e) => {
                const text = (e.target as HTMLInputElement).value;
                setTyped(text);
                const n = parseAmount(text);
                if (n !== null) setAmount(n);
              }}
              onBlur={() => setTyped(null)}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  setTyped(null);
                  raise();
                }
              }}
            />
            <span id="bet-range" class="fine">{t("action.range", { lo: chips(lo), hi: chips(hi) })}</span>
          </label>
          <div class="row presets">
            <button class="chip-btn" aria-keyshortcuts="1" onClick={() => pick(lo)}>{t("action.min")}</button>
            <button class="chip-btn" aria-keyshortcuts="2" onClick={() => pick(potTo(1n))}>{t("action.halfPot")}</button>
            <button class="chip-btn" aria-keyshortcuts="3" onClick={() => pick(potTo(2n))}>{t("action.pot")}</button>
            <button class="chip-btn" onClick={() => pick(hi)}>{t("action.allIn")}</button>
          </div>
        </div>
      )}
    </fieldset>
  );
}

function DiscardBar({ view, seat, max, busy, onAct }: { view: TableView; seat: number; max: number; busy: boolean; onAct: (a: ActionInit) => void }) {
  const me = view.hand!.seats.find((s) => s.seat === seat);
  const [picked, setPicked] = useState<number[]>([]);
  const toggle = (code: number) =>
    setPicked((p) => (p.includes(code) ? p.filter((c) => c !== code) : p.length < max ? [...p, code] : p));
  return (
    <fieldset class="action-bar" disabled={busy} aria-busy={busy} aria-label={t("action.chooseDiscards", { max })} data-testid="discard">
      <p>{t("action.chooseDiscards", { max })}</p>
      <div class="row discard-cards">
        {(me?.cards ?? []).map((c) =>
          c.kind.case === "code" ? <CardView card={c} selected={picked.includes(c.kind.value)} onToggle={() => toggle((c.kind as { value: number }).value)} /> : <CardView card={c} />,
        )}
      </div>
      <button class="primary" data-testid="act-discard" onClick={() => onAct({ kind: { case: "discard", value: { cards: picked } } })}>
        {picked.length ? t("action.discardN", { n: picked.length }) : t("action.standPat")}
      </button>
    </fieldset>
  );
}

export type { Action };
