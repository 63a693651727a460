// The signed-in player's credentials and seat tokens, kept in localStorage so a reload (or
// a dropped connection) carries on where the player was. Access tokens are short-lived: a
// call refused with TOKEN_EXPIRED is retried once after RefreshSession (a refresh token
// works once, so concurrent refreshes share one call).
import { ConnectError, Code, type Interceptor } from "@connectrpc/connect";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { LobbyService } from "./gen/poker/v1/lobby_service_pb";
import type { Credentials } from "./gen/poker/v1/lobby_pb";
import { reasonOf, requestId, type Lobby } from "./api";

interface Stored {
  playerId: string;
  name: string;
  registered: boolean;
  access: string;
  refresh: string;
}

export interface SeatTicket {
  seat: number;
  token: string;
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
    refresh: c?.refreshToken ?? stored?.refresh ?? "",
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

export function forgetSeat(loungeId: string): void {
  const all = seats();
  delete all[loungeId];
  localStorage.setItem(SEATS, JSON.stringify(all));
}

async function refresh(): Promise<void> {
  const plain = createClient(LobbyService, createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true }));
  const res = await plain.refreshSession({ refreshToken: stored?.refresh ?? "", requestId: requestId() });
  if (stored && res.credentials) {
    stored = { ...stored, access: res.credentials.accessToken, refresh: res.credentials.refreshToken };
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
    if (e.code !== Code.Unauthenticated || reasonOf(e) !== "TOKEN_EXPIRED" || !stored?.refresh) throw err;
    refreshing ??= refresh().finally(() => (refreshing = null));
    await refreshing;
    req.header.set("authorization", `Bearer ${stored.access}`);
    return await next(req);
  }
};

export function lobby(): Lobby {
  return createClient(LobbyService, createConnectTransport({ baseUrl: location.origin, interceptors: [auth], useBinaryFormat: true }));
}
