// The Connect clients of the lobby and table APIs, as the gateway serves them on this page's
// own origin. Lobby calls carry the player's access token; table calls carry the token of
// the seat they act for (JoinLounge returns it), so a table client is made per seat.
import { createClient, ConnectError, Code, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { fromBinary } from "@bufbuild/protobuf";
import type { LobbyService } from "./gen/poker/v1/lobby_service_pb";
import type { HistoryService } from "./gen/poker/v1/history_service_pb";
import { TableService } from "./gen/poker/v1/table_service_pb";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb";
import { Reason } from "./gen/poker/v1/reason_pb";

export { Reason };

export type Lobby = Client<typeof LobbyService>;
export type Tables = Client<typeof TableService>;
export type History = Client<typeof HistoryService>;

function bearer(token: () => string): Interceptor {
  return (next) => async (req) => {
    const t = token();
    if (t) req.header.set("authorization", `Bearer ${t}`);
    return next(req);
  };
}

function transport(token: () => string) {
  return createConnectTransport({
    baseUrl: window.location.origin,
    interceptors: [bearer(token)],
    // Binary on the wire: smaller and faster to parse than JSON; the gateway speaks both.
    useBinaryFormat: true,
  });
}

/** A table client for one seat; `seatToken` is read at every call, so a renewed token is
 * used from the next call on. */
export function tableClient(seatToken: () => string): Tables {
  return createClient(TableService, transport(seatToken));
}

/** The server's `google.rpc.ErrorInfo` reason of a refusal ("" when it has none). */
export function reasonOf(err: unknown): string {
  const e = ConnectError.from(err);
  for (const d of e.details) {
    if ("type" in d && d.type === "google.rpc.ErrorInfo") {
      try {
        return fromBinary(ErrorInfoSchema, d.value).reason;
      } catch {
        return "";
      }
    }
  }
  return "";
}

/** Whether `err` is a fetch that reached no server: a TypeError ("Failed to fetch"), thrown
 * as it is or as the cause of the ConnectError that wraps it. */
export function unreached(err: unknown): boolean {
  const cause = err instanceof ConnectError ? err.cause : err;
  return cause instanceof TypeError;
}

/** Whether a refusal carries the declared `reason` (`poker.v1.Reason`, protos/poker/v1/reason.proto:
 * the wire carries the value's name as `ErrorInfo.reason`). */
export function refusedFor(err: unknown, reason: Reason): boolean {
  return reasonOf(err) === Reason[reason];
}

/** The Connect code of an error, by name ("unavailable", ...). A request that reached no
 * server at all (the browser's fetch failed: the gateway is stopped or restarting) is
 * "unavailable" too, not "unknown": it is worth retrying, and the page says the server cannot
 * be reached instead of "Something went wrong". */
export function codeOf(err: unknown): string {
  const e = ConnectError.from(err);
  const code = e.code === Code.Unknown && unreached(err) ? Code.Unavailable : e.code;
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

/** A fresh request id: mutating calls are idempotent per id, so a retry reuses it. */
export function requestId(): string {
  return crypto.randomUUID();
}
