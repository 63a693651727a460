"""The lobby fuzzer: a hypothesis state machine over every LobbyService and HistoryService RPC.

Many players (guests and registered) sign up, sign in, refresh, sign out,
upgrade, top up, read balances, ledgers and players, create lounges (public and
private, with AI seats), list and read them, join (retries of the same request
id, the same id with other content, concurrent joins racing for seats, full
lounges), leave, refresh seat tokens, close lounges, play hands at the table
service with their seat tokens (an AI worker plays the AI seats), and read hand
histories as a seat, a spectator, a stranger and the operator; fields are often
hostile (odd and huge strings, int64 edges, other players' and unknown ids).

What must hold, checked after every call or step (docs/testing.md):

* a refusal is a clean status with an ``ErrorInfo`` reason (never INTERNAL or
  UNKNOWN, never a hung call) and changes nothing: the caller's ledger holds no
  new row of its own (a compensated buy-in nets to zero; cash-outs settled in the
  background are not the call's); a retry with the same request id moves no chips;
* chips are conserved (``tests.fuzz.lobby.audit.audit``: one SQL snapshot, each
  saga against its rows);
* no view or history a caller receives shows a card the table's raw events say
  it may not see (its own seat's cards in the hands it played, and shown cards);
* after quiescence (teardown: driving stops, the recovery passes run) no saga is
  in flight (``audit.in_flight``).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, ClassVar

import grpc
from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from felt.storage.eventstore import events_key
from felt.wire.limits import MAX_REQUEST_BYTES
from poker.events.v1 import events_pb2 as epb
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as tspb
from tests.fuzz.lobby.audit import audit, in_flight, ledger_mark, rows_since
from tests.fuzz.lobby.harness import ADMIN_TOKEN, Harness, StepHung
from tests.fuzz.machine import INT64_EDGES, ODD_STRINGS, Big, describe
from tests.fuzz.oracle import Ledger, Seen, Viewer, Violation, leaks, visible_cards
from tests.integration.table.harness import random_policy

CALL_TIMEOUT = 20.0  # a call that takes longer is reported as hung (generous: loaded 2 cores)
QUIESCENCE_S = 30.0  # how long the sagas may take to settle at teardown (generous)
KNOWN_WAIT_S = 10.0  # ... when all that is left is of kinds already reported
MAX_MESSAGE = 2000  # a refusal message longer than this echoes the caller's input back
MAX_PLAYERS = 8
MAX_LOUNGES = 4
PASSWORD = "correct horse battery"
# Settled in the background (a leave finished at a hand's end, a closed table): not a call's.
BACKGROUND_PREFIXES = ("s/cash-out/", "s/table-closed/")
MUTATING = {
    "CreateGuest",
    "Register",
    "UpgradeGuest",
    "SignIn",
    "RefreshSession",
    "SignOut",
    "TopUp",
    "CreateLounge",
    "JoinLounge",
    "LeaveLounge",
    "RefreshSeatToken",
    "CloseLounge",
}

# ----------------------------------------------------------------- strategies

odd_text = st.one_of(
    st.sampled_from(ODD_STRINGS),
    st.text(max_size=12),
    st.builds(Big, st.sampled_from([70_000]), st.sampled_from(["a", "é"])),
)
int64s = st.one_of(st.sampled_from(INT64_EDGES), st.integers(-(2**63), 2**63 - 1))
int32s = st.one_of(st.sampled_from([-1, 0, 1, 2, 8, 9, 10, 100, 2**31 - 1, -(2**31)]))
# A buy-in: in the lounge's range (most often), at its edges, just outside, or hostile.
buy_ins = st.one_of(
    st.tuples(st.just("in"), st.floats(0, 1)),
    st.tuples(st.just("in"), st.floats(0, 1)),
    st.tuples(st.just("edge"), st.sampled_from([-1, 0, 1, 2])),
    st.tuples(st.just("raw"), int64s),
)
# Whose id: ("own",) | ("other", k) | ("odd", text)
ids = st.one_of(
    st.just(("own",)),
    st.just(("own",)),
    st.tuples(st.just("other"), st.integers(0, MAX_PLAYERS)),
    st.tuples(st.just("odd"), odd_text),
)


@dataclass
class Account:
    """A player the machine made, with what it knows of its credentials."""

    name: str
    player_id: str
    access: str
    refresh: str
    password: str = ""  # "" for a guest
    old_refresh: list[str] = field(default_factory=list)
    signed_out: bool = False

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.access}"),)


@dataclass
class LoungeRef:
    lounge_id: str
    owner: int
    private: bool
    invite_code: str
    seat_count: int
    min_buy_in: int
    max_buy_in: int


@dataclass
class SeatRef:
    """A seat a join gave a player (its token, the request that got it)."""

    player: int
    lounge_id: str
    seat: int
    token: str
    join: pb.JoinLoungeRequest


@dataclass
class Outcome:
    response: Message | None
    code: grpc.StatusCode | None
    reason: str


def reason_of(error: grpc.aio.AioRpcError) -> str:
    """The ``ErrorInfo`` reason a refusal carries ("" when it carries none)."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


def _sane_config(variant: int, seats: int, stake: int, clock_ms: int) -> epb.TableConfig:
    clock = Duration(seconds=clock_ms // 1000, nanos=(clock_ms % 1000) * 1_000_000)
    if variant == 0:
        return epb.TableConfig(
            variant=epb.VARIANT_NLHE,
            seat_count=seats,
            small_blind=stake // 2,
            big_blind=stake,
            action_clock=clock,
            max_consecutive_timeouts=3,
        )
    return epb.TableConfig(
        variant=epb.VARIANT_DRAW5,
        seat_count=min(seats, 6),
        ante=max(1, stake // 10),
        small_bet=stake,
        action_clock=clock,
        max_consecutive_timeouts=3,
    )


class LobbyFuzzer(RuleBasedStateMachine):
    """Random sequences of every lobby and history RPC, with the oracles after each.

    No rule has a precondition (which rules run must not depend on timing, or hypothesis
    could not replay a sequence); a rule with nothing to do returns.
    """

    harness: ClassVar[Harness]

    def __init__(self) -> None:
        super().__init__()
        self.h = self.harness
        self.h.sequences += 1
        self.h.run(self.h.reset())
        self.accounts: list[Account] = []
        self.lounges: list[LoungeRef] = []
        self.seats: list[SeatRef] = []
        self.ledgers: dict[str, Ledger] = {}
        # (table, hand id) -> {seat: player id}; (table, seat) -> sequence of its PlayerSeated
        self.dealt: dict[tuple[str, str], dict[int, str]] = {}
        self.public_ids: dict[str, list[tuple[str, str]]] = {}  # table -> (public, hand id)
        self.seated_at: dict[tuple[str, int], int] = {}
        self.answered: dict[tuple[int, str, str], bytes] = {}  # (caller, rpc, id) -> request
        self.violations: list[Violation] = []
        self.failed: list[Violation] = []
        self.notes: list[str] = []
        self.down = False
        self.names = 0

    # ------------------------------------------------------------- bookkeeping

    def fail(self, kind: str, detail: str) -> None:
        self.violations.append(Violation(kind, detail))

    def step(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run one step's calls, then the chips oracle; note what broke."""
        if self.down:
            coro.close()
            return
        try:
            self.h.run(coro)
            self.h.run(self._audit())
        except StepHung as exc:
            self.fail("hung/step", f"{exc} (its calls are the notes before it)")
            self.down = True
        finally:
            for line in self.notes:
                note(line)
            self.notes.clear()
        for violation in self.violations:
            self.h.record(violation)
            if violation.kind not in self.h.known:
                self.failed.append(violation)
        self.violations.clear()

    async def _audit(self) -> None:
        for lounge in self.lounges:
            await self.sync(lounge.lounge_id)  # the tables' truth, for the next step's checks
        assert self.h.pool is not None
        async with self.h.pool.acquire() as conn:
            result = await audit(conn)
        if not result.conserved:
            self.fail("chips/not-conserved", str(result))
        for problem in result.problems:
            self.fail("chips/ledger", problem)
        if result.minted:
            self.fail(
                "chips/minted-at-tables",
                f"{result.minted:,} chips came back from tables beyond all buy-ins (won from "
                "seats no ledger row funded)",
            )

    def teardown(self) -> None:
        if not self.down:
            try:
                self.h.run(self._quiesce(), timeout=QUIESCENCE_S + 60)
            except StepHung as exc:
                self.fail("hung/quiescence", str(exc))
            for violation in self.violations:
                self.h.record(violation)
                if violation.kind not in self.h.known:
                    self.failed.append(violation)
        self.h.hands += sum(ledger.hands_started for ledger in self.ledgers.values())
        if self.failed:
            lines = list(dict.fromkeys(str(v) for v in self.failed))
            raise AssertionError("invariant violated:\n" + "\n".join(lines))

    async def _quiesce(self) -> None:
        """Stop driving; let hands end (seats still dealt in fold at their turn, as players
        who walked away would time out) and the recovery passes settle every saga."""
        assert self.h.pool is not None
        loop = asyncio.get_running_loop()
        start = loop.time()
        pending = None
        while loop.time() < start + QUIESCENCE_S:
            async with self.h.pool.acquire() as conn:
                pending = await in_flight(conn)
            if not pending:
                break
            if pending.kinds() <= self.h.known and loop.time() > start + KNOWN_WAIT_S:
                break  # only defects already reported: no need to wait them out again
            for lounge in self.lounges:
                await self._fold_for_humans(lounge.lounge_id)
            await asyncio.sleep(0.25)
        if pending:
            waited = loop.time() - start
            for kind in sorted(pending.kinds()):
                self.fail(kind, f"after {waited:.0f} s of quiescence: {pending}")
        await self._audit()

    # ------------------------------------------------------------- one call

    async def call(
        self, method: str, request: Message, caller: int | None, md: Any = (), who: str = ""
    ) -> Outcome:
        """One unary call of the lobby, history or table service, with the per-call checks.

        ``caller`` is the account whose chips the call may move (None: none of ours).
        """
        stub = (
            self.h.history
            if method in ("GetHandHistory", "ListPlayerHands")
            else self.h.tables
            if method in ("GetTableView", "SubmitAction")
            else self.h.lobby
        )
        mark = await self._mark(caller)
        self.h.calls += 1
        error: grpc.aio.AioRpcError | None = None
        response: Message | None = None
        try:
            response = await getattr(stub, method)(request, metadata=md, timeout=CALL_TIMEOUT)
        except grpc.aio.AioRpcError as err:
            error = err
        outcome = Outcome(response, None, "")
        label = f"{method}({describe(request)}) as {who or caller}"
        if error is None:
            self.h.count(method, "OK")
            self.notes.append(f"{label} -> OK")
            return outcome
        self.h.refusals += 1
        outcome.code, outcome.reason = error.code(), reason_of(error)
        self.notes.append(f"{label} -> {outcome.code.name} {outcome.reason}")
        self.h.count(method, f"{outcome.code.name} {outcome.reason}".strip())
        details = error.details() or ""
        if outcome.code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
            self.fail(f"{outcome.code.name}/{method}", f"{label} answered {details[:300]!r}")
        elif outcome.code == grpc.StatusCode.DEADLINE_EXCEEDED:
            self.fail(f"hung/{method}", f"{label} did not answer in {CALL_TIMEOUT} s")
        elif request.ByteSize() > MAX_REQUEST_BYTES:
            # Refused by gRPC itself, before any handler: no ErrorInfo can be attached.
            if outcome.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
                self.fail(f"oversized/{method}", f"{label}: {outcome.code.name} for too big")
        elif not outcome.reason:
            self.fail(f"no-reason/{method}", f"{label}: {outcome.code.name} without ErrorInfo")
        if len(details) > MAX_MESSAGE:
            self.fail(f"echoed-input/{method}", f"{label}: a {len(details)}-character message")
        if (
            method in MUTATING
            and caller is not None
            and outcome.code != grpc.StatusCode.UNAVAILABLE
        ):
            moved = await self._moved(caller, mark)
            if moved:
                self.fail(f"refusal-moved-chips/{method}", f"{label} was followed by {moved}")
        return outcome

    async def _mark(self, caller: int | None) -> int:
        if caller is None:
            return 0
        assert self.h.pool is not None
        async with self.h.pool.acquire() as conn:
            return await ledger_mark(conn, self.accounts[caller].player_id)

    async def _moved(self, caller: int, mark: int) -> list[tuple[str, int, str]]:
        """The caller's ledger rows after ``mark`` that a call made, if they move chips."""
        assert self.h.pool is not None
        async with self.h.pool.acquire() as conn:
            rows = await rows_since(conn, self.accounts[caller].player_id, mark)
        own = [r for r in rows if not r[2].startswith(BACKGROUND_PREFIXES)]
        if any(kind in ("grant", "top_up") for kind, _, _ in own) or sum(r[1] for r in own) != 0:
            return own
        return []

    # ------------------------------------------------------------- the tables' truth

    async def sync(self, table_id: str) -> Ledger:
        """Fold the table's new raw events (read straight from Redis) into its ledger."""
        ledger = self.ledgers.setdefault(table_id, Ledger(table_id))
        try:
            key = events_key(table_id)
        except ValueError:
            return ledger
        assert self.h.redis is not None
        entries: list[tuple[bytes, dict[bytes, bytes]]] = await self.h.redis.xrange(  # type: ignore[assignment]
            key, min=f"({ledger.version}-0"
        )
        for _, fields in entries:
            stored = epb.StoredEvent.FromString(fields[b"e"])
            ledger.feed(stored)
            kind = stored.WhichOneof("event")
            if kind == "player_seated":
                self.seated_at[(table_id, stored.player_seated.seat)] = stored.sequence
            elif kind == "hand_started":
                setup = stored.hand_started.setup
                self.dealt[(table_id, stored.hand_id)] = {s.seat: s.player_id for s in setup.seats}
                self.public_ids.setdefault(table_id, []).append((setup.public_id, stored.hand_id))
        for violation in ledger.violations:
            self.fail(f"table-{violation.kind}", violation.detail)
        ledger.violations.clear()
        return ledger

    def allowed(self, table_id: str, hand_id: str, player_id: str | None) -> set[int]:
        """The cards of a hand a player may see in its history: what was public, and the
        cards of every seat the player held in that hand."""
        ledger = self.ledgers[table_id]
        hand = ledger.hands.get(hand_id)
        if hand is None:
            return set()
        cards = set(hand.public)
        for seat, pid in self.dealt.get((table_id, hand_id), {}).items():
            if player_id is not None and pid == player_id:
                cards |= hand.own.get(seat, set())
        return cards

    def check_history(
        self, table_id: str, player_id: str | None, message: Message, who: str
    ) -> None:
        checked: dict[str, set[int]] = {}
        seen: Seen
        for seen in visible_cards(message):
            if seen.hand_id not in checked:
                checked[seen.hand_id] = self.allowed(table_id, seen.hand_id, player_id)
            if seen.card not in checked[seen.hand_id]:
                self.fail(
                    "card-leak/history",
                    f"GetHandHistory showed {who} the {seen.where} {seen.card} of hand "
                    f"{seen.hand_id!r} at {table_id!r}",
                )
                return

    # ------------------------------------------------------------- picking

    def account(self, k: int) -> int | None:
        return k % len(self.accounts) if self.accounts else None

    def lounge(self, k: int) -> LoungeRef | None:
        return self.lounges[k % len(self.lounges)] if self.lounges else None

    def seat_of(self, player: int, lounge_id: str) -> SeatRef | None:
        for ref in reversed(self.seats):
            if ref.player == player and ref.lounge_id == lounge_id:
                return ref
        return None

    def player_id(self, spec: tuple[Any, ...], me: int) -> str:
        if spec[0] == "own":
            return self.accounts[me].player_id
        if spec[0] == "other" and self.accounts:
            return self.accounts[int(spec[1]) % len(self.accounts)].player_id
        return str(spec[-1])

    def fresh_name(self) -> str:
        self.names += 1
        return f"Fuzz{self.names}-{uuid.uuid4().hex[:4]}"

    # ------------------------------------------------------------- players

    @initialize(
        count=st.integers(2, 4),
        variant=st.integers(0, 1),
        seats=st.integers(2, 6),
        ai=st.integers(0, 2),
        joins=st.integers(0, 4),
        registered=st.integers(0, 2),
    )
    def start(
        self, count: int, variant: int, seats: int, ai: int, joins: int, registered: int
    ) -> None:
        """A few players (some registered), a sane public lounge of the first one's (with
        some AI seats), and some of them seated, so that every sequence has chips at a
        table to play with."""
        for k in range(count):
            self.step(self._sign_up(k < registered, ("fresh",), PASSWORD))
        config = _sane_config(variant, seats, 10, 400)
        bots: list[tuple[int | None, int]] = [(None, epb.AI_LEVEL_EASY)] * min(
            ai, config.seat_count - 1
        )
        self.step(self._create(0, config, bots, False, None))
        for k in range(min(joins, count)):
            self.join(k, 0, None, ("in", 0.5), "right", "no")

    @rule(
        registered=st.booleans(),
        name=st.one_of(
            st.just(("fresh",)),
            st.just(("fresh",)),
            st.tuples(st.just("taken"), st.integers(0, MAX_PLAYERS)),
            st.tuples(st.just("odd"), odd_text),
        ),
        password=st.one_of(st.just(PASSWORD), odd_text),
    )
    def sign_up(self, registered: bool, name: tuple[Any, ...], password: str) -> None:
        if len(self.accounts) < MAX_PLAYERS or name[0] != "fresh":
            self.step(self._sign_up(registered, name, str(password)))

    async def _sign_up(self, registered: bool, name: tuple[Any, ...], password: str) -> None:
        if name[0] == "taken" and self.accounts:
            display = self.accounts[name[1] % len(self.accounts)].name.upper()
        elif name[0] == "odd":
            display = str(name[1])
        else:
            display = self.fresh_name()
        rid = str(uuid.uuid4())
        if registered:
            reg = pb.RegisterRequest(display_name=display, password=password, request_id=rid)
            out = await self.call("Register", reg, None, who="a newcomer")
        else:
            guest = pb.CreateGuestRequest(display_name=display, request_id=rid)
            out = await self.call("CreateGuest", guest, None, who="a newcomer")
        if isinstance(out.response, pb.RegisterResponse | pb.CreateGuestResponse):
            creds = out.response.credentials
            self.accounts.append(
                Account(
                    out.response.player.display_name,
                    out.response.player.player_id,
                    creds.access_token,
                    creds.refresh_token,
                    password if registered else "",
                )
            )

    @rule(who=st.integers(0, MAX_PLAYERS), right=st.booleans(), odd=odd_text)
    def sign_in(self, who: int, right: bool, odd: str) -> None:
        k = self.account(who)
        if k is not None:
            self.step(self._sign_in(k, right, str(odd)))

    async def _sign_in(self, k: int, right: bool, odd: str) -> None:
        a = self.accounts[k]
        password = a.password if right and a.password else odd
        request = pb.SignInRequest(
            display_name=a.name, password=password, request_id=str(uuid.uuid4())
        )
        out = await self.call("SignIn", request, k)
        if isinstance(out.response, pb.SignInResponse):
            a.access = out.response.credentials.access_token
            a.refresh = out.response.credentials.refresh_token
            a.signed_out = False

    @rule(who=st.integers(0, MAX_PLAYERS), stale=st.booleans())
    def refresh_session(self, who: int, stale: bool) -> None:
        k = self.account(who)
        if k is not None:
            self.step(self._refresh(k, stale))

    async def _refresh(self, k: int, stale: bool) -> None:
        a = self.accounts[k]
        token = a.old_refresh[-1] if stale and a.old_refresh else a.refresh
        request = pb.RefreshSessionRequest(refresh_token=token, request_id=str(uuid.uuid4()))
        out = await self.call("RefreshSession", request, k)
        if isinstance(out.response, pb.RefreshSessionResponse) and token == a.refresh:
            a.old_refresh.append(a.refresh)
            a.access = out.response.credentials.access_token
            a.refresh = out.response.credentials.refresh_token

    @rule(who=st.integers(0, MAX_PLAYERS), guest_too=st.sampled_from([False, False, True]))
    def sign_out(self, who: int, guest_too: bool) -> None:
        """Sign out, then (registered) sign in again; a guest's sign-out is for good, so it is
        drawn less often (else most sequences would soon be made of players locked out)."""
        k = self.account(who)
        if k is not None and (guest_too or self.accounts[k].password):
            self.step(self._sign_out(k))

    async def _sign_out(self, k: int) -> None:
        a = self.accounts[k]
        out = await self.call("SignOut", pb.SignOutRequest(request_id=str(uuid.uuid4())), k, a.md)
        if out.code is None:
            a.signed_out = True
            revoked = await self.call("GetBalance", pb.GetBalanceRequest(), k, a.md)
            if revoked.code != grpc.StatusCode.UNAUTHENTICATED:
                self.fail("sign-out/token-lives", "an access token worked after its sign-out")
            if a.password:
                await self._sign_in(k, True, "")

    @rule(who=st.integers(0, MAX_PLAYERS), password=st.one_of(st.just(PASSWORD), odd_text))
    def upgrade_guest(self, who: int, password: str) -> None:
        k = self.account(who)
        if k is not None:
            self.step(self._upgrade(k, str(password)))

    async def _upgrade(self, k: int, password: str) -> None:
        a = self.accounts[k]
        request = pb.UpgradeGuestRequest(password=password, request_id=str(uuid.uuid4()))
        out = await self.call("UpgradeGuest", request, k, a.md)
        if out.code is None:
            a.password = password

    @rule(
        who=st.integers(0, MAX_PLAYERS),
        whom=ids,
        page_size=st.one_of(st.just(0), st.integers(1, 3), int32s),
        token=st.one_of(st.just(""), odd_text),
        bad_auth=st.sampled_from(["", "", "", "garbage", "refresh", "none"]),
    )
    def read_player(
        self, who: int, whom: tuple[Any, ...], page_size: int, token: str, bad_auth: str
    ) -> None:
        k = self.account(who)
        if k is not None:
            self.step(self._read_player(k, whom, page_size, str(token), bad_auth))

    async def _read_player(
        self, k: int, whom: tuple[Any, ...], page_size: int, token: str, bad_auth: str
    ) -> None:
        a = self.accounts[k]
        md = {
            "": a.md,
            "garbage": (("authorization", "Bearer x.y.z"),),
            "refresh": (("authorization", f"Bearer {a.refresh}"),),
            "none": (),
        }[bad_auth]
        await self.call("GetPlayer", pb.GetPlayerRequest(player_id=self.player_id(whom, k)), k, md)
        await self.call("GetBalance", pb.GetBalanceRequest(), k, md)
        pages = pb.ListLedgerEntriesRequest(page_size=page_size, page_token=token)
        out = await self.call("ListLedgerEntries", pages, k, md)
        if isinstance(out.response, pb.ListLedgerEntriesResponse) and any(
            e.kind == lpb.LEDGER_ENTRY_KIND_UNSPECIFIED for e in out.response.entries
        ):
            self.fail("ledger/kind", "a ledger entry of no kind was listed")

    @rule(who=st.integers(0, MAX_PLAYERS), again=st.booleans())
    def top_up(self, who: int, again: bool) -> None:
        k = self.account(who)
        if k is not None:
            self.step(self._top_up(k, again))

    async def _top_up(self, k: int, again: bool) -> None:
        a = self.accounts[k]
        request = pb.TopUpRequest(request_id=str(uuid.uuid4()))
        out = await self.call("TopUp", request, k, a.md)
        if again and out.code is None:
            mark = await self._mark(k)
            await self.call("TopUp", request, k, a.md, who=f"{k} (a retry)")
            moved = await self._moved(k, mark)
            if moved:
                self.fail("retry-moved-chips/TopUp", f"a retried TopUp was followed by {moved}")

    # ------------------------------------------------------------- lounges

    @rule(
        who=st.integers(0, MAX_PLAYERS),
        variant=st.integers(0, 1),
        seats=st.integers(2, 6),
        stake=st.sampled_from([2, 10, 50]),
        clock_ms=st.sampled_from([200, 400, 800]),
        ai=st.lists(
            st.tuples(
                st.one_of(st.none(), st.integers(-1, 9)), st.sampled_from([1, 1, 1, 2, 3, 0])
            ),
            max_size=4,
        ),
        private=st.booleans(),
        hostile=st.one_of(
            st.none(),
            st.none(),
            st.tuples(st.just("name"), odd_text),
            st.tuples(st.just("buy_in"), int64s, int64s),
            st.tuples(st.just("seat_count"), int32s),
            st.tuples(st.just("big_blind"), int64s),
        ),
    )
    def create_lounge(
        self,
        who: int,
        variant: int,
        seats: int,
        stake: int,
        clock_ms: int,
        ai: list[tuple[int | None, int]],
        private: bool,
        hostile: tuple[Any, ...] | None,
    ) -> None:
        k = self.account(who)
        if k is not None and len(self.lounges) < MAX_LOUNGES:
            config = _sane_config(variant, seats, stake, clock_ms)
            self.step(self._create(k, config, ai, private, hostile))

    async def _create(
        self,
        k: int,
        config: epb.TableConfig,
        ai: list[tuple[int | None, int]],
        private: bool,
        hostile: tuple[Any, ...] | None,
    ) -> None:
        request = pb.CreateLoungeRequest(
            name=f"Lounge {len(self.lounges)}",
            config=config,
            private=private,
            request_id=str(uuid.uuid4()),
            ai_seats=[lpb.AiSeat(seat=s, level=lvl) for s, lvl in ai],  # type: ignore[arg-type]
        )
        if hostile is not None:
            what = hostile[0]
            if what == "name":
                request.name = str(hostile[1])
            elif what == "buy_in":
                request.min_buy_in, request.max_buy_in = hostile[1], hostile[2]
            elif what == "seat_count":
                request.config.seat_count = hostile[1]
            elif what == "big_blind":
                request.config.big_blind = hostile[1]
        a = self.accounts[k]
        out = await self.call("CreateLounge", request, k, a.md)
        if isinstance(out.response, pb.CreateLoungeResponse):
            lounge = out.response.lounge
            self.lounges.append(
                LoungeRef(
                    lounge.lounge_id,
                    k,
                    lounge.private,
                    lounge.invite_code,
                    lounge.config.seat_count,
                    lounge.min_buy_in,
                    lounge.max_buy_in,
                )
            )
            await self.sync(lounge.lounge_id)
            # A retry with the same id answers the same lounge; with other content, refused.
            again = await self.call("CreateLounge", request, k, a.md, who=f"{k} (a retry)")
            if (
                isinstance(again.response, pb.CreateLoungeResponse)
                and again.response.lounge.lounge_id != lounge.lounge_id
            ):
                self.fail("retry/CreateLounge", "a retried CreateLounge made another lounge")
            other = pb.CreateLoungeRequest()
            other.CopyFrom(request)
            other.name = request.name + " bis"
            reused = await self.call("CreateLounge", other, k, a.md, who=f"{k} (id reused)")
            if reused.code is None:
                self.fail("reuse/CreateLounge", "a request id reused with other content was OK")

    @rule(
        who=st.integers(0, MAX_PLAYERS),
        variant=st.sampled_from([0, 1, 2, 7]),
        stakes=st.tuples(st.one_of(st.just(0), int64s), st.one_of(st.just(0), int64s)),
        free=st.one_of(st.integers(0, 9), int32s),
        page_size=st.one_of(st.just(0), st.integers(1, 3), int32s),
        token=st.one_of(st.just(""), odd_text),
    )
    def list_lounges(
        self,
        who: int,
        variant: int,
        stakes: tuple[int, int],
        free: int,
        page_size: int,
        token: str,
    ) -> None:
        k = self.account(who)
        if k is not None:
            request = pb.ListLoungesRequest(
                variant=variant,  # type: ignore[arg-type]
                min_stake=stakes[0],
                max_stake=stakes[1],
                min_free_seats=free,
                page_size=page_size,
                page_token=str(token),
            )
            self.step(self._list(k, request))

    async def _list(self, k: int, request: pb.ListLoungesRequest) -> None:
        out = await self.call("ListLounges", request, k, self.accounts[k].md)
        if isinstance(out.response, pb.ListLoungesResponse):
            for lounge in out.response.lounges:
                if lounge.private or lounge.invite_code:
                    self.fail("private-listed", f"ListLounges showed {lounge.lounge_id}")

    @rule(
        who=st.integers(0, MAX_PLAYERS),
        which=st.integers(0, MAX_LOUNGES),
        code=st.sampled_from(["right", "none", "wrong"]),
        bad_id=st.one_of(st.none(), st.none(), odd_text),
    )
    def get_lounge(self, who: int, which: int, code: str, bad_id: str | None) -> None:
        k, lounge = self.account(who), self.lounge(which)
        if k is not None and lounge is not None:
            self.step(self._get(k, lounge, code, bad_id))

    async def _get(self, k: int, lounge: LoungeRef, code: str, bad_id: str | None) -> None:
        invite = {"right": lounge.invite_code, "none": "", "wrong": "not-the-code"}[code]
        lounge_id = lounge.lounge_id if bad_id is None else str(bad_id)
        request = pb.GetLoungeRequest(lounge_id=lounge_id, invite_code=invite)
        out = await self.call("GetLounge", request, k, self.accounts[k].md)
        if isinstance(out.response, pb.GetLoungeResponse):
            got = out.response.lounge
            if got.invite_code and got.owner_id != self.accounts[k].player_id:
                self.fail(
                    "invite-leak",
                    f"GetLounge showed a non-owner the invite code of {got.lounge_id}",
                )
            if (
                lounge.private
                and code != "right"
                and lounge.owner != k
                and got.lounge_id == lounge.lounge_id
                and self.seat_of(k, lounge.lounge_id) is None  # its players may be let in
            ):
                self.fail(
                    "private-read", f"a private lounge read without its code: {got.lounge_id}"
                )

    @rule(
        who=st.integers(0, MAX_PLAYERS),
        which=st.integers(0, MAX_LOUNGES),
        seat=st.one_of(st.none(), st.none(), st.integers(0, 9), int32s),
        buy_in=buy_ins,
        code=st.sampled_from(["right", "right", "none", "wrong"]),
        retry=st.sampled_from(["no", "no", "same", "other"]),
    )
    def join(
        self,
        who: int,
        which: int,
        seat: int | None,
        buy_in: tuple[str, Any],
        code: str,
        retry: str,
    ) -> None:
        k, lounge = self.account(who), self.lounge(which)
        if k is not None and lounge is not None:
            self.step(self._join(k, lounge, seat, buy_in, code, retry))

    def _amount(self, lounge: LoungeRef, buy_in: tuple[str, Any]) -> int:
        kind, value = buy_in
        if kind == "in":
            return lounge.min_buy_in + int((lounge.max_buy_in - lounge.min_buy_in) * value)
        if kind == "edge":
            return int(lounge.min_buy_in + value if value <= 0 else lounge.max_buy_in + value - 1)
        return int(value)

    def _join_request(
        self, lounge: LoungeRef, seat: int | None, buy_in: tuple[str, Any], code: str
    ) -> pb.JoinLoungeRequest:
        invite = {"right": lounge.invite_code, "none": "", "wrong": "not-the-code"}[code]
        return pb.JoinLoungeRequest(
            lounge_id=lounge.lounge_id,
            seat=seat,
            buy_in=self._amount(lounge, buy_in),
            invite_code=invite,
            request_id=str(uuid.uuid4()),
        )

    async def _join(
        self,
        k: int,
        lounge: LoungeRef,
        seat: int | None,
        buy_in: tuple[str, Any],
        code: str,
        retry: str,
    ) -> None:
        request = self._join_request(lounge, seat, buy_in, code)
        out = await self._join_call(k, request)
        if out.code is not None or retry == "no":
            return
        mark = await self._mark(k)
        if retry == "same":
            again = await self.call(
                "JoinLounge", request, k, self.accounts[k].md, who=f"{k} (a retry)"
            )
            if (
                isinstance(again.response, pb.JoinLoungeResponse)
                and isinstance(out.response, pb.JoinLoungeResponse)
                and again.response.seat != out.response.seat
            ):
                self.fail("retry/JoinLounge", "a retried join answered another seat")
        else:
            other = pb.JoinLoungeRequest()
            other.CopyFrom(request)
            other.buy_in = request.buy_in + 1
            reused = await self.call(
                "JoinLounge", other, k, self.accounts[k].md, who=f"{k} (id reused)"
            )
            if reused.code is None:
                self.fail("reuse/JoinLounge", "a request id reused with other content was OK")
        rows = await self._rows(k, mark)
        if any(kind == "buy_in" for kind, _, _ in rows):
            self.fail("retry-moved-chips/JoinLounge", f"a join's retry took a buy-in: {rows}")

    async def _rows(self, k: int, mark: int) -> list[tuple[str, int, str]]:
        assert self.h.pool is not None
        async with self.h.pool.acquire() as conn:
            return await rows_since(conn, self.accounts[k].player_id, mark)

    async def _join_call(self, k: int, request: pb.JoinLoungeRequest) -> Outcome:
        out = await self.call("JoinLounge", request, k, self.accounts[k].md)
        if isinstance(out.response, pb.JoinLoungeResponse):
            r = out.response
            self.seats.append(SeatRef(k, r.lounge_id, r.seat, r.seat_token, request))
        return out

    @rule(which=st.integers(0, MAX_LOUNGES), seat=st.one_of(st.none(), st.integers(0, 8)))
    def join_race(self, which: int, seat: int | None) -> None:
        """Every player at once, for one seat (or the next free one): one lounge fills up."""
        lounge = self.lounge(which)
        if lounge is not None and self.accounts:
            self.step(self._race(lounge, seat))

    async def _race(self, lounge: LoungeRef, seat: int | None) -> None:
        requests = [
            (k, self._join_request(lounge, seat, ("in", 0.0), "right"))
            for k in range(len(self.accounts))
        ]
        outs = await asyncio.gather(*(self._join_call(k, r) for k, r in requests))
        if seat is not None:
            won = [o for o in outs if o.code is None]
            if len(won) > 1 and len({o.response.seat for o in won if o.response}) < len(won):  # type: ignore[attr-defined]
                self.fail("race/JoinLounge", f"{len(won)} joins got seat {seat}")

    @rule(who=st.integers(0, MAX_PLAYERS), which=st.integers(0, MAX_LOUNGES), retry=st.booleans())
    def leave(self, who: int, which: int, retry: bool) -> None:
        k, lounge = self.account(who), self.lounge(which)
        if k is not None and lounge is not None:
            self.step(self._leave(k, lounge, retry))

    async def _leave(self, k: int, lounge: LoungeRef, retry: bool) -> None:
        request = pb.LeaveLoungeRequest(lounge_id=lounge.lounge_id, request_id=str(uuid.uuid4()))
        out = await self.call("LeaveLounge", request, k, self.accounts[k].md)
        if retry and out.code is None:
            mark = await self._mark(k)
            await self.call("LeaveLounge", request, k, self.accounts[k].md, who=f"{k} (a retry)")
            rows = [
                r for r in await self._rows(k, mark) if not r[2].startswith(BACKGROUND_PREFIXES)
            ]
            if rows:
                self.fail("retry-moved-chips/LeaveLounge", f"a retried leave moved {rows}")

    @rule(
        who=st.integers(0, MAX_PLAYERS),
        which=st.integers(0, MAX_LOUNGES),
        retry=st.sampled_from(["no", "same", "superseded"]),
    )
    def refresh_seat_token(self, who: int, which: int, retry: str) -> None:
        k, lounge = self.account(who), self.lounge(which)
        if k is not None and lounge is not None:
            self.step(self._reissue(k, lounge, retry))

    async def _reissue(self, k: int, lounge: LoungeRef, retry: str) -> None:
        md = self.accounts[k].md
        request = pb.RefreshSeatTokenRequest(
            lounge_id=lounge.lounge_id, request_id=str(uuid.uuid4())
        )
        out = await self.call("RefreshSeatToken", request, k, md)
        if not isinstance(out.response, pb.RefreshSeatTokenResponse):
            return
        ref = self.seat_of(k, lounge.lounge_id)
        first = out.response.seat_token
        if ref is not None:
            ref.token = first
        if retry == "same":
            again = await self.call("RefreshSeatToken", request, k, md, who=f"{k} (a retry)")
            if (
                isinstance(again.response, pb.RefreshSeatTokenResponse)
                and again.response.seat_token != first
            ):
                self.fail("retry/RefreshSeatToken", "a retry answered another token")
        elif retry == "superseded":
            later = pb.RefreshSeatTokenRequest(
                lounge_id=lounge.lounge_id, request_id=str(uuid.uuid4())
            )
            newer = await self.call("RefreshSeatToken", later, k, md)
            if isinstance(newer.response, pb.RefreshSeatTokenResponse) and ref is not None:
                ref.token = newer.response.seat_token
                again = await self.call(
                    "RefreshSeatToken", request, k, md, who=f"{k} (stale retry)"
                )
                if again.code is None and again.response.seat_token == first:  # type: ignore[union-attr]
                    self.fail("retry/RefreshSeatToken", "a superseded token was answered again")
                # the old token no longer works at the table
                view = tspb.GetTableViewRequest(table_id=lounge.lounge_id, seat=ref.seat)
                stale = await self.call(
                    "GetTableView", view, k, (("authorization", f"Bearer {first}"),), "stale token"
                )
                if stale.code is None:
                    self.fail("stale-token", "a replaced seat token still read the seat's view")

    @rule(who=st.integers(0, MAX_PLAYERS), which=st.integers(0, MAX_LOUNGES), retry=st.booleans())
    def close_lounge(self, who: int, which: int, retry: bool) -> None:
        k, lounge = self.account(who), self.lounge(which)
        if k is not None and lounge is not None:
            self.step(self._close(k, lounge, retry))

    async def _close(self, k: int, lounge: LoungeRef, retry: bool) -> None:
        request = pb.CloseLoungeRequest(lounge_id=lounge.lounge_id, request_id=str(uuid.uuid4()))
        md = self.accounts[k].md
        out = await self.call("CloseLounge", request, k, md)
        if out.code is None and lounge.owner != k:
            self.fail(
                "close/not-owner", f"player {k} closed lounge {lounge.lounge_id} of {lounge.owner}"
            )
        if retry:
            await self.call("CloseLounge", request, k, md, who=f"{k} (a retry)")

    # ------------------------------------------------------------- the tables

    @rule(which=st.integers(0, MAX_LOUNGES), moves=st.integers(1, 8), seed=st.integers(0, 2**16))
    def play(self, which: int, moves: int, seed: int) -> None:
        lounge = self.lounge(which)
        if lounge is not None:
            self.step(self._play(lounge.lounge_id, moves, random.Random(seed)))

    def current_seat(self, table_id: str, seat: int) -> SeatRef | None:
        for ref in reversed(self.seats):
            if ref.lounge_id == table_id and ref.seat == seat:
                return ref
        return None

    async def _play(self, table_id: str, moves: int, rng: random.Random) -> None:
        for _ in range(moves):
            out = await self.call(
                "GetTableView", tspb.GetTableViewRequest(table_id=table_id), None, (), "spectator"
            )
            ledger = await self.sync(table_id)
            if not isinstance(out.response, tspb.GetTableViewResponse):
                return
            self.violations.extend(leaks(ledger, Viewer(table_id), out.response, "GetTableView"))
            hand = out.response.view.hand
            ref = self.current_seat(table_id, hand.to_act) if hand.HasField("to_act") else None
            if ref is None:
                await asyncio.sleep(0.2)  # an AI's turn, or no hand: the worker and timers act
                continue
            md = (("authorization", f"Bearer {ref.token}"),)
            mine = await self.call(
                "GetTableView",
                tspb.GetTableViewRequest(table_id=table_id, seat=ref.seat),
                ref.player,
                md,
                f"seat {ref.seat}",
            )
            ledger = await self.sync(table_id)
            if not isinstance(mine.response, tspb.GetTableViewResponse):
                continue
            since = self.seated_at.get((table_id, ref.seat), 0)
            viewer = Viewer(table_id, ref.seat, since)
            self.violations.extend(leaks(ledger, viewer, mine.response, "GetTableView"))
            view = mine.response.view
            if not view.hand.legal_actions:
                continue
            action = random_policy(view, rng)
            # Sometimes a hostile caller: another seat's token, or the seat's for another seat.
            roll = rng.random()
            seat = ref.seat
            if roll < 0.1:
                seat = (ref.seat + 1) % 9
            request = tspb.SubmitActionRequest(
                table_id=table_id,
                seat=seat,
                request_id=uuid.uuid4().hex,
                expected_sequence=view.table.sequence,
                action=action,
            )
            await self.call("SubmitAction", request, ref.player, md, f"seat {ref.seat}")

    async def _fold_for_humans(self, table_id: str) -> None:
        """At quiescence: a seat of ours that is to act folds (the table's clock would too)."""
        try:
            got = await self.h.tables.GetTableView(
                tspb.GetTableViewRequest(table_id=table_id), timeout=CALL_TIMEOUT
            )
        except grpc.aio.AioRpcError:
            return
        hand = got.view.hand
        ref = self.current_seat(table_id, hand.to_act) if hand.HasField("to_act") else None
        if ref is None:
            return
        md = (("authorization", f"Bearer {ref.token}"),)
        request = tspb.SubmitActionRequest(
            table_id=table_id,
            seat=ref.seat,
            request_id=uuid.uuid4().hex,
            expected_sequence=got.view.table.sequence,
            action=tpb.Action(fold=tpb.Action.Fold()),
        )
        with contextlib.suppress(grpc.aio.AioRpcError):
            await self.h.tables.SubmitAction(request, metadata=md, timeout=CALL_TIMEOUT)

    # ------------------------------------------------------------- history

    @rule(
        who=st.sampled_from(["seat", "stranger", "spectator", "operator", "garbage"]),
        pick=st.integers(0, MAX_PLAYERS),
        which=st.integers(0, MAX_LOUNGES),
        hand=st.integers(0, 1000),
        reader=st.sampled_from([0, 1, 2, 3]),
        seat=st.one_of(st.none(), st.integers(0, 8), int32s),
        where=st.sampled_from(["table", "table", "none", "other", "odd"]),
        bad_hand=st.one_of(st.none(), st.none(), st.none(), odd_text),
    )
    def hand_history(
        self,
        who: str,
        pick: int,
        which: int,
        hand: int,
        reader: int,
        seat: int | None,
        where: str,
        bad_hand: str | None,
    ) -> None:
        played = [lounge for lounge in self.lounges if self.public_ids.get(lounge.lounge_id)]
        lounge = played[which % len(played)] if played else self.lounge(which)
        if lounge is not None:
            self.step(self._history(who, pick, lounge, hand, reader, seat, where, bad_hand))

    async def _history(
        self,
        who: str,
        pick: int,
        lounge: LoungeRef,
        hand: int,
        reader: int,
        seat: int | None,
        where: str,
        bad_hand: str | None,
    ) -> None:
        table_id = lounge.lounge_id
        await self.sync(table_id)
        hands = self.public_ids.get(table_id, [])
        if not hands and bad_hand is None:
            return
        public_id, hand_id = hands[hand % len(hands)] if hands else ("", "")
        dealt = self.dealt.get((table_id, hand_id), {})
        player: int | None = None
        if who == "seat":
            ours = [i for i, a in enumerate(self.accounts) if a.player_id in dealt.values()]
            player = ours[pick % len(ours)] if ours else None
            if player is not None and seat is None and reader == 2:
                seat = next(s for s, p in dealt.items() if p == self.accounts[player].player_id)
        elif who == "stranger" and self.accounts:
            strangers = [
                i for i, a in enumerate(self.accounts) if a.player_id not in dealt.values()
            ]
            player = strangers[pick % len(strangers)] if strangers else None
        md: Any = ()
        if player is not None:
            md = self.accounts[player].md
        elif who == "operator":
            md = (("authorization", f"Bearer {ADMIN_TOKEN}"),)
        elif who == "garbage":
            md = (("authorization", "Bearer not-a-token"),)
        other = self.lounges[(self.lounges.index(lounge) + 1) % len(self.lounges)].lounge_id
        request = hpb.HistoryServiceGetHandHistoryRequest(
            hand_id=public_id if bad_hand is None else str(bad_hand),
            table_id={"table": table_id, "none": "", "other": other, "odd": "t\x00../x"}[where],
            reader=reader,  # type: ignore[arg-type]
            seat=seat,
        )
        label = f"{who} {player}" if player is not None else who
        out = await self.call("GetHandHistory", request, player, md, label)
        if isinstance(out.response, hpb.HistoryServiceGetHandHistoryResponse):
            await self.sync(table_id)
            if who != "operator":
                pid = self.accounts[player].player_id if player is not None else None
                self.check_history(table_id, pid, out.response, label)
        if player is not None:
            whose = self.accounts[pick % len(self.accounts)].player_id
            listing = hpb.ListPlayerHandsRequest(
                page_size=seat or 0, player_id=whose if hand % 3 == 0 else ""
            )
            listed = await self.call("ListPlayerHands", listing, player, md, label)
            if (
                listed.code is None
                and whose != self.accounts[player].player_id
                and listing.player_id
            ):
                self.fail("history/other-player", "ListPlayerHands listed another player's hands")

    @rule(seconds=st.sampled_from([0.2, 0.5, 1.0]))
    def wait(self, seconds: float) -> None:
        """Time passes: hands are played by the AI worker and the clocks, sagas settle."""
        self.step(asyncio.sleep(seconds))


def machine_for(harness: Harness) -> type[LobbyFuzzer]:
    """The state machine class bound to a running harness (hypothesis instantiates it)."""
    return type("LobbyFuzzer", (LobbyFuzzer,), {"harness": harness})
