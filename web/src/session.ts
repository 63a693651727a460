// The signed-in player's access token and seat tokens, kept in localStorage so a reload (or
// a dropped connection) carries on where the player was. Access tokens are short-lived: a
// call refused with TOKEN_EXPIRED is retried once after RefreshSession (a refresh token
// works once, so concurrent refreshes share one call). The refresh token itself is never
// seen here: the gateway keeps it in an HttpOnly, SameSite=Strict cookie, sent only with
// RefreshSession (docs/gateway.md, "Sessions in a browser"), so no script can read it.
import { ConnectError, Code, type Interceptor } from "@connectrpc/connect";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { LobbyService } from "./gen/poker/v1/lobby_service_pb";
import { HistoryService } from "./gen/poker/v1/history_service_pb";
import type { Credentials } from "./gen/poker/v1/lobby_pb";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Reason, refusedFor, requestId, type Lobby, type History } from "./api";

interface Stored {
  playerId: string;
  name: string;
  registered: boolean;
  access: string;
  /** A refresh token stored before the cookie held it: sent once to move it there. */
  refresh?: string;
}

export interface SeatTicket {
  seat: number;
  token: string;
  /** When the token stops working, in ms since the epoch (0: never). */
  expires: number;
}

const KEY = "felt.session";
const SEATS = "felt.seats";

let stored: Stored | null = load();
let refreshing: Promise<void> | null = null;

function load(): Stored | null {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? "null") as Stored | null;
  } catch {
    return null;
  }
}

export function current(): Stored | null {
  return stored;
}

export function save(player: { playerId: string; displayName: string; registered: boolean }, c?: Credentials): void {
  stored = {
    playerId: player.playerId,
    name: player.displayName,
    registered: player.registered,
    access: c?.accessToken ?? stored?.access ?? "",
  };
  localStorage.setItem(KEY, JSON.stringify(stored));
}

export function clear(): void {
  stored = null;
  localStorage.removeItem(KEY);
  localStorage.removeItem(SEATS);
}

function seats(): Record<string, SeatTicket> {
  try {
    return JSON.parse(localStorage.getItem(SEATS) ?? "{}") as Record<string, SeatTicket>;
  } catch {
    return {};
  }
}

export function seatAt(loungeId: string): SeatTicket | undefined {
  return seats()[loungeId];
}

export function rememberSeat(loungeId: string, ticket: SeatTicket): void {
  localStorage.setItem(SEATS, JSON.stringify({ ...seats(), [loungeId]: ticket }));
}

/** A `seat_token_expire_time` in ms since the epoch (0 when unset: the token never expires). */
export function expiryOf(at: Timestamp | undefined): number {
  return at ? Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6) : 0;
}

/** How long to wait before renewing a token that expires at `expires`: until half of what
 * is left, at most five minutes, remains, so a renewal refused for a moment (the lobby
 * restarting) has time for retries before the old token stops working. */
export function renewIn(expires: number, now = Date.now()): number {
  const left = expires - now;
  return Math.max(0, left - Math.min(5 * 60_000, left / 2));
}

/** A fresh token for the caller's seat at `loungeId` (RefreshSeatToken; the old one stops
 * working at once), kept for the lounge. A refusal is thrown: NOT_SEATED when the seat is
 * gone (left, or the lounge closed). */
export async function renewSeat(loungeId: string): Promise<SeatTicket> {
  const res = await lobby().refreshSeatToken({ loungeId, requestId: requestId() });
  const ticket = { seat: res.seat, token: res.seatToken, expires: expiryOf(res.seatTokenExpireTime) };
  rememberSeat(loungeId, ticket);
  return ticket;
}

export function forgetSeat(loungeId: string): void {
  const all = seats();
  delete all[loungeId];
  localStorage.setItem(SEATS, JSON.stringify(all));
}

/** fetch, with the page's own cookies (the refresh token's) and no other origin's. */
const sameOrigin: typeof fetch = (input, init) => fetch(input, { ...init, credentials: "same-origin" });

async function refresh(): Promise<void> {
  const plain = createClient(
    LobbyService,
    createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true, fetch: sameOrigin }),
  );
  // The token is the cookie's; only one kept from before the cookie is sent in the body.
  const res = await plain.refreshSession({ refreshToken: stored?.refresh ?? "", requestId: requestId() });
  if (stored && res.credentials) {
    stored = { playerId: stored.playerId, name: stored.name, registered: stored.registered, access: res.credentials.accessToken };
    localStorage.setItem(KEY, JSON.stringify(stored));
  }
}

/** Adds the access token, and refreshes it once when the lobby says it expired. */
export const auth: Interceptor = (next) => async (req) => {
  if (stored?.access) req.header.set("authorization", `Bearer ${stored.access}`);
  try {
    return await next(req);
  } catch (err) {
    const e = ConnectError.from(err);
    if (e.code !== Code.Unauthenticated || !refusedFor(e, Reason.TOKEN_EXPIRED) || !stored) throw err;
    refreshing ??= refresh().finally(() => (refreshing = null));
    await refreshing;
    req.header.set("authorization", `Bearer ${stored.access}`);
    return await next(req);
  }
};

function signedIn() {
  return createConnectTransport({ baseUrl: location.origin, interceptors: [auth], useBinaryFormat: true, fetch: sameOrigin });
}

export function lobby(): Lobby {
  return createClient(LobbyService, signedIn());
}

/** The hand histories (HistoryService), as the signed-in player: its own hands, its cards. */
export function history(): History {
  return createClient(HistoryService, signedIn());
}
