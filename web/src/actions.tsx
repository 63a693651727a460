// The seat's turn: only the actions the server listed as legal, with bet sizes limited to
// its [min_to, max_to]. Presets (min, half pot, pot, all-in) are clamped to that range;
// Draw's discard picks 0 to max_discards of the seat's own cards.
import { useState } from "preact/hooks";
import { t, chips } from "./i18n";
import { CardView } from "./card";
import { ActionType, type TableView, type LegalAction, type Action } from "./gen/poker/v1/table_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ActionSchema } from "./gen/poker/v1/table_pb";

type ActionInit = MessageInitShape<typeof ActionSchema>;

function clamp(v: bigint, lo: bigint, hi: bigint): bigint {
  return v < lo ? lo : v > hi ? hi : v;
}

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
  // A pot-sized raise: call, then raise by the pot after the call.
  const potTo = (fraction: bigint) => hand.currentBet + ((pot + toCall) * fraction) / 2n;

  const sized = (to: bigint): ActionInit => {
    if (allIn && me && to >= me.stack + me.bet) return { kind: { case: "allIn", value: {} } };
    return sizing!.type === ActionType.RAISE ? { kind: { case: "raiseTo", value: { amount: to } } } : { kind: { case: "betTo", value: { amount: to } } };
  };

  return (
    <fieldset class="action-bar" disabled={busy} aria-busy={busy} aria-label={t("action.yourTurn")} data-testid="actions">
      <div class="row main-actions">
        {legal.has(ActionType.FOLD) && (
          <button class="danger" data-testid="act-fold" onClick={() => onAct({ kind: { case: "fold", value: {} } })}>{t("action.fold")}</button>
        )}
        {legal.has(ActionType.CHECK) && (
          <button class="secondary" data-testid="act-check" onClick={() => onAct({ kind: { case: "check", value: {} } })}>{t("action.check")}</button>
        )}
        {call && (
          <button class="secondary" data-testid="act-call" onClick={() => onAct({ kind: { case: "call", value: {} } })}>{t("action.call", { amount: chips(call.amount) })}</button>
        )}
        {sizing && (
          <button class="primary" data-testid="act-raise" onClick={() => onAct(sized(value))}>
            {t(sizing.type === ActionType.RAISE ? "action.raiseTo" : "action.betTo", { amount: chips(value) })}
          </button>
        )}
        {!sizing && allIn && (
          <button class="primary" data-testid="act-allin" onClick={() => onAct({ kind: { case: "allIn", value: {} } })}>{t("action.allInFor", { amount: chips(allIn.amount) })}</button>
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
            onInput={(e) => setAmount(BigInt((e.target as HTMLInputElement).value))}
          />
          <div class="row presets">
            <button class="chip-btn" onClick={() => setAmount(lo)}>{t("action.min")}</button>
            <button class="chip-btn" onClick={() => setAmount(clamp(potTo(1n), lo, hi))}>{t("action.halfPot")}</button>
            <button class="chip-btn" onClick={() => setAmount(clamp(potTo(2n), lo, hi))}>{t("action.pot")}</button>
            <button class="chip-btn" onClick={() => setAmount(hi)}>{t("action.allIn")}</button>
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
