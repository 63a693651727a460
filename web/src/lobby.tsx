// The lobby: sign-up as a guest, sign-in or registration; then the balance with its free
// top-up, the open lounges (variant, stakes, free seats) with a buy-in to join, and a form
// to create a lounge with AI opponents of chosen levels.
import { useEffect, useRef, useState } from "preact/hooks";
import { t, chips } from "./i18n";
import type { Key } from "./i18n";
import * as session from "./session";
import { requestId, codeOf, reasonOf } from "./api";
import { PendingIds, joinKey, memoryStore, type IdStore } from "./retry";
import { defaultLoungeName } from "./bots";
import { reportIfLost } from "./lost";
import { errorText } from "./errors";
import { go } from "./route";
import { Variant, AiLevel, type TableConfig } from "./gen/poker/events/v1/events_pb";
import type { Lounge } from "./gen/poker/v1/lobby_pb";
import type { GetBalanceResponse } from "./gen/poker/v1/lobby_service_pb";
import { Rules } from "./rules";
import { CloseLounge } from "./close";
import { CardView } from "./card";
import { create } from "@bufbuild/protobuf";
import { CardSchema } from "./gen/poker/events/v1/events_pb";

export function Welcome({ onSignedIn, note = "" }: { onSignedIn: () => void; note?: string }) {
  const [mode, setMode] = useState<"guest" | "signIn" | "register">("guest");
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    const lobby = session.lobby();
    try {
      const id = requestId();
      const res =
        mode === "guest" ? await lobby.createGuest({ displayName: name.trim(), requestId: id })
        : mode === "register" ? await lobby.register({ displayName: name.trim(), password, requestId: id })
        : await lobby.signIn({ displayName: name.trim(), password, requestId: id });
      if (res.player) session.save(res.player, res.credentials);
      onSignedIn();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const tabs: [typeof mode, Key][] = [["guest", "welcome.guest"], ["signIn", "welcome.signIn"], ["register", "welcome.register"]];
  return (
    <section class="welcome">
      <div class="hero">
        <div class="fan" aria-hidden="true">
          {[51, 46, 41, 36, 31].map((value) => (
            <CardView card={create(CardSchema, { kind: { case: "code", value } })} />
          ))}
        </div>
        <h1>{t("welcome.title")}</h1>
        <p>{t("welcome.tagline")}</p>
      </div>
      <form class="panel auth" onSubmit={submit} aria-label={t(tabs.find(([m]) => m === mode)![1])}>
        <div class="tabs" role="tablist">
          {tabs.map(([m, key]) => (
            <button type="button" role="tab" aria-selected={mode === m} class={mode === m ? "tab on" : "tab"} onClick={() => setMode(m)}>
              {t(key)}
            </button>
          ))}
        </div>
        <label>
          {t("welcome.name")}
          <input data-testid="name" value={name} maxLength={32} required autoComplete="username" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        {mode !== "guest" && (
          <label>
            {t("welcome.password")}
            <input type="password" data-testid="password" value={password} minLength={8} maxLength={128} required autoComplete={mode === "register" ? "new-password" : "current-password"} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
          </label>
        )}
        {note && !error && <p class="notice" role="status" data-testid="session-lost">{note}</p>}
        {error && <p class="error" role="alert">{error}</p>}
        <button class="primary" data-testid="enter" disabled={busy}>
          {mode === "guest" ? t("welcome.playAsGuest") : mode === "register" ? t("welcome.createAccount") : t("welcome.signIn")}
        </button>
        <p class="fine">{t("welcome.chipsNote")}</p>
      </form>
    </section>
  );
}

const STAKES: Record<"nlhe" | "draw", [number, number][]> = {
  nlhe: [[1, 2], [5, 10], [25, 50], [100, 200]],
  draw: [[2, 4], [10, 20], [50, 100]],
};
const LEVELS: [AiLevel, Key][] = [[AiLevel.EASY, "ai.easy"], [AiLevel.NORMAL, "ai.normal"], [AiLevel.HARD, "ai.hard"]];

export function variantName(v: Variant): string {
  return v === Variant.DRAW5 ? t("variant.draw") : t("variant.nlhe");
}

/** A table's stakes as players say them: the blinds (Hold'em), the small/big bet (Draw). */
export function stakesOf(c: TableConfig): string {
  if (c.variant === Variant.DRAW5) return `${chips(c.smallBet)}/${chips(c.bigBet || c.smallBet * 2n)}`;
  return `${chips(c.smallBlind)}/${chips(c.bigBlind)}`;
}

/** A lounge's name as shown: a client's default name ("nlhe vs AI") in the player's language. */
export function loungeName(name: string): string {
  const d = defaultLoungeName(name);
  if (!d) return name;
  const variant = variantName(d.variant === "draw" ? Variant.DRAW5 : Variant.NLHE);
  return d.kind === "vsAi" ? t("lobby.vsAiName", { variant }) : t("lobby.defaultName", { variant });
}

export function stakesText(l: Lounge): string {
  return stakesOf(l.config!);
}

export function LobbyScreen() {
  const [balance, setBalance] = useState<GetBalanceResponse | null>(null);
  const [lounges, setLounges] = useState<Lounge[]>([]);
  const [error, setError] = useState("");
  // Why the last refresh failed (the servers cannot be reached, e.g. while they restart):
  // apart from `error` (an action's refusal) because the next refresh that works clears it.
  const [stale, setStale] = useState("");
  const [note, setNote] = useState("");
  const [joining, setJoining] = useState<Lounge | null>(null);
  // Lounges the player is closing: kept in the list (the lobby lists open ones only) so the
  // close's result stays in view.
  const closing = useRef(new Map<string, Lounge>());
  const lobby = session.lobby();

  const refresh = async () => {
    try {
      const [b, l] = await Promise.all([lobby.getBalance({}), lobby.listLounges({ pageSize: 50 })]);
      setBalance(b);
      const listed = new Set(l.lounges.map((x) => x.loungeId));
      setLounges([...[...closing.current.values()].filter((x) => !listed.has(x.loungeId)), ...l.lounges]);
      setStale("");
    } catch (err) {
      if (!reportIfLost(err)) setStale(errorText(err));
    }
  };
  useEffect(() => {
    refresh();
    const timer = setInterval(refresh, 5000);
    return () => clearInterval(timer);
  }, []);

  const topUp = async () => {
    setError("");
    try {
      const res = await lobby.topUp({ requestId: requestId() });
      setNote(t("lobby.toppedUp", { amount: Number(res.entry?.amount ?? 0n) }));
      await refresh();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const low = balance ? balance.balance < balance.topUpBelow : false;
  const nextTopUp = balance?.nextTopUpTime ? Number(balance.nextTopUpTime.seconds) * 1000 : 0;
  const canTopUp = low && nextTopUp <= Date.now();

  return (
    <div class="lobby">
      <section class="panel balance" aria-labelledby="balance-title">
        <h2 id="balance-title">{t("lobby.balance")}</h2>
        <p class="big" data-testid="balance">{balance ? chips(balance.balance) : "…"}</p>
        <button class="secondary" onClick={topUp} disabled={!canTopUp} data-testid="top-up">
          {t("lobby.topUp")}
        </button>
        <p class="fine">
          {balance && !low ? t("lobby.topUpWhenLow", { below: Number(balance.topUpBelow) })
            : low && !canTopUp ? t("lobby.topUpAt", { time: new Date(nextTopUp).toLocaleTimeString() }) : ""}
        </p>
        {note && <p class="ok" role="status">{note}</p>}
        <a href="#/hands" data-testid="my-hands">{t("hands.title")}</a>
      </section>

      <CreateLounge onCreated={refresh} onError={setError} balance={balance?.balance ?? null} />

      <section class="panel lounges" aria-labelledby="lounges-title">
        <h2 id="lounges-title">{t("lobby.lounges")}</h2>
        {stale && <p class="error" role="alert" data-testid="lobby-stale">{stale}</p>}
        {error && <p class="error" role="alert">{error}</p>}
        {lounges.length === 0 ? (
          <p class="fine">{t("lobby.noLounges")}</p>
        ) : (
          <table class="list">
            <thead>
              <tr><th>{t("lobby.lounge")}</th><th>{t("lobby.variant")}</th><th>{t("lobby.stakes")}</th><th>{t("lobby.freeSeats")}</th><th><span class="sr-only">{t("lobby.join")}</span></th></tr>
            </thead>
            <tbody>
              {lounges.map((l) => {
                const mine = session.seatAt(l.loungeId);
                return (
                  <tr data-testid="lounge-row" key={l.loungeId}>
                    <td>{loungeName(l.name)}</td>
                    <td>{variantName(l.config!.variant)}</td>
                    <td>{stakesText(l)}</td>
                    <td>{l.freeSeats}/{l.config!.seatCount}</td>
                    <td class="row-actions">
                      <CloseLounge loungeId={l.loungeId} ownerId={l.ownerId} name={l.name} onClosing={() => closing.current.set(l.loungeId, l)} />
                      {closing.current.has(l.loungeId) ? null : mine ? (
                        <button class="secondary" onClick={() => go({ name: "table", lounge: l.loungeId })}>{t("lobby.backToTable")}</button>
                      ) : (
                        <button class="secondary" disabled={l.freeSeats === 0} onClick={() => setJoining(l)}>{t("lobby.join")}</button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>

      {joining && <JoinDialog lounge={joining} balance={balance?.balance ?? 0n} onClose={() => setJoining(null)} />}
      <Rules />
    </div>
  );
}

/** Pending joins' request ids in sessionStorage: a retry after a reload is the same join too. */
function sessionIds(): IdStore {
  try {
    const s = sessionStorage;
    return { get: (k) => s.getItem(`felt.rid.${k}`), set: (k, v) => s.setItem(`felt.rid.${k}`, v), remove: (k) => s.removeItem(`felt.rid.${k}`) };
  } catch {
    return memoryStore();
  }
}
const joins = new PendingIds(sessionIds(), requestId);
const creates = new PendingIds(sessionIds(), requestId);

/** Takes a seat at `lounge` with a buy-in from the balance (waiting for the big blind if
 * asked: Hold'em only), then opens its table. A retry of the same join (same lounge, buy-in
 * and choice) after an uncertain failure (UNAVAILABLE, a timeout) reuses its request id, so
 * the lobby answers it once and holds one buy-in. */
export async function join(lounge: Lounge | string, buyIn: bigint, waitForBigBlind = false): Promise<void> {
  const loungeId = typeof lounge === "string" ? lounge : lounge.loungeId;
  const key = joinKey(session.current()?.playerId ?? "", loungeId, buyIn, waitForBigBlind);
  let res;
  try {
    res = await session.lobby().joinLounge({ loungeId, buyIn, requestId: joins.idFor(key), waitForBigBlind });
  } catch (err) {
    joins.answered(key, codeOf(err), reasonOf(err));
    throw err;
  }
  joins.answered(key, "");
  session.rememberSeat(loungeId, { seat: res.seat, token: res.seatToken, expires: session.expiryOf(res.seatTokenExpireTime) });
  go({ name: "table", lounge: loungeId });
}

/** "Wait for the big blind" on joining (Hold'em only: a Draw game has no big blind). */
function WaitForBigBlind({ value, onChange }: { value: boolean; onChange: (v: boolean) => void }) {
  return (
    <label class="wait-for-big-blind">
      <input type="checkbox" data-testid="join-wait-for-big-blind" checked={value} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} />
      {t("lobby.waitForBigBlind")}
    </label>
  );
}

function BuyIn({ min, max, value, onChange }: { min: bigint; max: bigint; value: bigint; onChange: (v: bigint) => void }) {
  return (
    <label class="buy-in">
      {t("lobby.buyIn")} <strong data-testid="buy-in-value">{chips(value)}</strong>
      <input type="range" min={Number(min)} max={Number(max)} step={1} value={Number(value)} aria-valuetext={chips(value)} onInput={(e) => onChange(BigInt((e.target as HTMLInputElement).value))} />
      <span class="range-ends"><span>{chips(min)}</span><span>{chips(max)}</span></span>
    </label>
  );
}

/** The buy-in dialog; `before` runs first (the bust panel's leave), `onJoined` after. */
export function JoinDialog({ lounge, balance, onClose, before, onJoined }: { lounge: Lounge; balance: bigint; onClose: () => void; before?: () => Promise<void>; onJoined?: () => void }) {
  const max = lounge.maxBuyIn < balance ? lounge.maxBuyIn : balance;
  const [buyIn, setBuyIn] = useState(max >= lounge.minBuyIn ? max : lounge.minBuyIn);
  const [waitForBigBlind, setWaitForBigBlind] = useState(false);
  const holdem = lounge.config?.variant === Variant.NLHE;
  const [error, setError] = useState("");
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await before?.();
      await join(lounge, buyIn, holdem && waitForBigBlind);
      onJoined?.();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <div class="dialog-backdrop" role="dialog" aria-modal="true" aria-labelledby="join-title" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <form class="panel dialog" onSubmit={submit}>
        <h2 id="join-title">{t("lobby.joinTitle", { name: loungeName(lounge.name) })}</h2>
        <p>{variantName(lounge.config!.variant)} · {stakesText(lounge)}</p>
        <BuyIn min={lounge.minBuyIn} max={max > lounge.minBuyIn ? max : lounge.minBuyIn} value={buyIn} onChange={setBuyIn} />
        {holdem && <WaitForBigBlind value={waitForBigBlind} onChange={setWaitForBigBlind} />}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="row">
          <button type="button" class="ghost" onClick={onClose}>{t("app.cancel")}</button>
          <button class="primary" data-testid="join-confirm" autoFocus>{t("lobby.sitDown")}</button>
        </div>
      </form>
    </div>
  );
}

/** The choices of how long a seat without chips is kept (seconds as the select's value; ""
 * the server's standard, "0" until its player leaves), each with its label. */
const GRACES: [string, () => string][] = [
  ["", () => t("lobby.graceDefault")],
  ["60", () => t("lobby.graceMinutes", { n: 1 })],
  ["300", () => t("lobby.graceMinutes", { n: 5 })],
  ["900", () => t("lobby.graceMinutes", { n: 15 })],
  ["3600", () => t("lobby.graceHour")],
  ["0", () => t("lobby.graceNever")],
];

/** `balance`: null until the lobby has answered; creating waits for it (a buy-in taken from an
 * unknown balance was 0, so the lounge was made and the join refused: no table). */
function CreateLounge({ onCreated, onError, balance: known }: { onCreated: () => void; onError: (s: string) => void; balance: bigint | null }) {
  const balance = known ?? 0n;
  const [variant, setVariant] = useState<"nlhe" | "draw">("nlhe");
  const [stakes, setStakes] = useState(1);
  const [seats, setSeats] = useState(6);
  const [ais, setAis] = useState<AiLevel[]>([AiLevel.EASY, AiLevel.NORMAL]);
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const maxSeats = variant === "draw" ? 6 : 9;
  const seatCount = Math.min(seats, maxSeats);
  const [sb, bb] = STAKES[variant][Math.min(stakes, STAKES[variant].length - 1)];
  const stake = BigInt(variant === "draw" ? sb : bb);
  // The lobby's default range: 20 to 100 stakes (big blinds or small bets).
  const [buyIn, setBuyIn] = useState(0n);
  const [waitForBigBlind, setWaitForBigBlind] = useState(false);
  // How long a seat without chips is kept before the lobby frees it (Lounge.busted_grace_s):
  // "" leaves it to the server's standard (FELT_LOBBY_BUSTED_GRACE_S), 0 keeps it until its
  // player leaves.
  const [grace, setGrace] = useState("");
  const maxBuy = 100n * stake < balance ? 100n * stake : balance;
  const value = buyIn >= 20n * stake && buyIn <= maxBuy ? buyIn : maxBuy;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    onError("");
    const lobby = session.lobby();
    try {
      const config =
        variant === "draw"
          ? { variant: Variant.DRAW5, seatCount, ante: BigInt(Math.max(1, sb / 2)), smallBet: BigInt(sb), bigBet: BigInt(bb), actionClock: { seconds: 30n } }
          : { variant: Variant.NLHE, seatCount, smallBlind: BigInt(sb), bigBlind: BigInt(bb), actionClock: { seconds: 30n } };
      // Unnamed: the default in English, which every player's client shows in its own
      // language (loungeName), not in the creator's.
      const title = name.trim() || (config.variant === Variant.DRAW5 ? "Five-Card Draw lounge" : "No-Limit Hold'em lounge");
      // The same form sent again after an uncertain failure is the same create (one lounge),
      // as a retried join is the same join.
      const key = `create:${session.current()?.playerId ?? ""}:${title}:${variant}:${seatCount}:${stakes}:${ais.join(",")}:${grace}`;
      let res;
      try {
        res = await lobby.createLounge({
          name: title,
          config,
          aiSeats: ais.map((level) => ({ level })),
          ...(grace === "" ? {} : { bustedGraceS: Number(grace) }),
          requestId: creates.idFor(key),
        });
      } catch (err) {
        creates.answered(key, codeOf(err), reasonOf(err));
        throw err;
      }
      creates.answered(key, "");
      await join(res.lounge!.loungeId, value, variant === "nlhe" && waitForBigBlind);
      onCreated();
    } catch (err) {
      onError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="panel create" onSubmit={submit} aria-labelledby="create-title">
      <h2 id="create-title">{t("lobby.create")}</h2>
      <label>
        {t("lobby.loungeName")}
        <input data-testid="lounge-name" value={name} maxLength={64} placeholder={t("lobby.defaultName", { variant: variantName(variant === "draw" ? Variant.DRAW5 : Variant.NLHE) })} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <fieldset class="seg">
        <legend>{t("lobby.variant")}</legend>
        {(["nlhe", "draw"] as const).map((v) => (
          <label class={variant === v ? "on" : ""}>
            <input type="radio" name="variant" value={v} data-testid={`variant-${v}`} checked={variant === v} onChange={() => setVariant(v)} />
            {t(v === "nlhe" ? "variant.nlhe" : "variant.draw")}
          </label>
        ))}
      </fieldset>
      <div class="row">
        <label>
          {t("lobby.stakes")}
          <select value={stakes} onChange={(e) => setStakes(Number((e.target as HTMLSelectElement).value))}>
            {STAKES[variant].map(([a, b], i) => (
              <option value={i}>{chips(a)}/{chips(b)}</option>
            ))}
          </select>
        </label>
        <label>
          {t("lobby.seats")}
          <select value={seatCount} onChange={(e) => setSeats(Number((e.target as HTMLSelectElement).value))}>
            {Array.from({ length: maxSeats - 1 }, (_, i) => i + 2).map((n) => (
              <option value={n}>{n}</option>
            ))}
          </select>
        </label>
      </div>
      <label>
        {t("lobby.bustedGrace")}
        <select data-testid="busted-grace" value={grace} onChange={(e) => setGrace((e.target as HTMLSelectElement).value)}>
          {GRACES.map(([value, label]) => (
            <option value={value}>{label()}</option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>{t("lobby.aiOpponents")}</legend>
        <ul class="ai-list">
          {ais.map((level, i) => (
            <li>
              <label>
                <span class="sr-only">{t("lobby.aiN", { n: i + 1 })}</span>
                <select data-testid="ai-level" value={level} onChange={(e) => setAis(ais.map((x, j) => (j === i ? (Number((e.target as HTMLSelectElement).value) as AiLevel) : x)))}>
                  {LEVELS.map(([l, key]) => (
                    <option value={l}>{t(key)}</option>
                  ))}
                </select>
              </label>
              <button type="button" class="ghost small" aria-label={t("lobby.removeAi", { n: i + 1 })} onClick={() => setAis(ais.filter((_, j) => j !== i))}>✕</button>
            </li>
          ))}
        </ul>
        <button type="button" class="ghost" disabled={ais.length >= seatCount - 1} onClick={() => setAis([...ais, AiLevel.NORMAL])}>
          + {t("lobby.addAi")}
        </button>
      </fieldset>
      <BuyIn min={20n * stake} max={maxBuy > 20n * stake ? maxBuy : 20n * stake} value={value} onChange={setBuyIn} />
      {variant === "nlhe" && <WaitForBigBlind value={waitForBigBlind} onChange={setWaitForBigBlind} />}
      <button class="primary" data-testid="create" disabled={busy || known === null || ais.length > seatCount - 1}>{t("lobby.createAndSit")}</button>
    </form>
  );
}
