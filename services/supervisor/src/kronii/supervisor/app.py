"""The supervisor as a service: the registry, the queue, the trigger lifecycle driven through the
core's table, the tmux adapter, the fallback launcher, metrics, audit and outcome events.

Every public method takes a protobuf request and the caller's verified claims and returns a
protobuf answer; the HTTP router and the gRPC servicer only translate (api/)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import secrets
import time
import uuid
from collections import deque
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import grpc
from fastapi import APIRouter
from kronii.common import subjects
from kronii.common.access import AccessRules
from kronii.common.errors import (
    Conflict,
    InvalidArgument,
    KroniiError,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
)
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.supervisor import identity
from kronii.supervisor.adapters.panes import Baseline, PaneDriver
from kronii.supervisor.adapters.registry import Registry, RuntimeRecord
from kronii.supervisor.adapters.sessions import find_session_id
from kronii.supervisor.adapters.state import Snapshot, SupervisorState
from kronii.supervisor.adapters.tmux import CONTROL_SESSION, TmuxControl, TmuxError, attach_command, pid_alive
from kronii.supervisor.api.convert import outcome_message, runtime_message, to_epoch
from kronii.supervisor.api.grpc_api import SupervisorServicer
from kronii.supervisor.api.http_api import supervisor_router
from kronii.supervisor.core.agent_state import AgentState, Delivery
from kronii.supervisor.core.machine import (
    Defer,
    Deliver,
    Effect,
    EmitCollision,
    Finish,
    LaunchResume,
    LaunchSpawn,
    MarkOperatorBusy,
    Resubmit,
    TriggerMachine,
    WaitAck,
)
from kronii.supervisor.core.model import (
    CollisionGate,
    GuardFacts,
    PaneFacts,
    Result,
    RuntimeFacts,
    RuntimeStatus,
    Situation,
)
from kronii.supervisor.core.params import AgentKind, KindBook, SupervisorParams, render_argv
from kronii.supervisor.core.payload import Payload, PayloadError, clean_prompt
from kronii.supervisor.core.policy import ThreadState, assess, observe_turn, override_audit
from kronii.supervisor.core.table import Phase, Signal
from kronii.supervisor.core.tokens import Claims, TokenError, issue_token, verify_token
from kronii.supervisor.fallback import StartCheck, start_visible
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.records import TriggerRecords
from kronii.supervisor.settings import SupervisorSettings
from kronii.supervisor.store import trigger_attempts, triggers
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc
from redis.exceptions import RedisError
from sqlalchemy import insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

__all__ = ["SupervisorApp", "load_or_create_secret"]

log = logging.getLogger(__name__)

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$")
_OVERRIDE_PREFIXES = ("human_override:", "coordinator_override:")
PENDING = "pending"
# Agent kinds whose session id can be found in the files the agent writes (adapters/sessions.py).
_SESSION_KINDS = frozenset({"codex", "claude"})


def load_or_create_secret(settings: SupervisorSettings) -> bytes:
    """The token secret: configured, or kept in <data_dir>/supervisor/token.key (0600)."""
    if settings.token_secret is not None:
        return settings.token_secret.get_secret_value().encode()
    path = settings.token_key_file
    if path.exists():
        return path.read_bytes().strip()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    value = secrets.token_hex(32).encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(value)
    return value


def _require_id(name: str, value: str) -> str:
    if not _ID.match(value):
        raise InvalidArgument(f"{name} is required: 1 to 128 letters, digits or ._:@/- (got {value!r})")
    return value


def _session_name(prefix: str, workspace_id: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_-]", "_", workspace_id)


@dataclass
class Job:
    """One trigger between requests: what was asked, by whom, and where its lifecycle stands."""

    trigger_id: str
    agent_id: str
    workspace_id: str
    thread_id: str
    prompt: str
    literal: bool
    ack_timeout_secs: float
    force: bool
    reason: str
    caller: str
    request_id: str
    created_at: float
    runtime_id: str = ""
    progress_marker: str = ""
    finding_key: str = ""
    machine: dict[str, Any] = field(default_factory=dict)
    admitted: bool = False
    typed_not_submitted: bool = False
    acked_by: str = ""
    gate: str = CollisionGate.NOT_EVALUATED.value
    # The transcript before the prompt was typed (see PaneDriver.baseline), kept with the job so
    # a restarted supervisor can still tell whether the agent took it.
    echoes_before: int = 0
    was_working: bool = False
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        return cls(**data)


class SupervisorApp:
    # Every route verifies a signed service token itself (scopes and workspaces).
    access_rules = AccessRules(self_authenticating=True)

    def __init__(self) -> None:
        self._ctx: ServiceContext | None = None
        self.settings: SupervisorSettings | None = None
        self.params = SupervisorParams()
        self.kinds = KindBook()
        self._secret = b""
        self._tmux: TmuxControl | None = None
        self._driver: PaneDriver | None = None
        self._registry: Registry | None = None
        self._state: SupervisorState | None = None
        self.metrics: SupervisorMetrics | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._inflight: dict[str, asyncio.Task[pb.TriggerOutcome]] = {}
        self._acks: dict[str, asyncio.Event] = {}
        self._ack_source: dict[str, str] = {}
        self._awaiting: dict[str, set[str]] = {}
        self._writes: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue(maxsize=20_000)
        self._tmux_problem = ""
        self._side_tasks: set[asyncio.Task[Any]] = set()
        # One delivery in flight per pane: each prompt is typed, submitted and confirmed before
        # the next one for that pane starts (asyncio.Lock hands the pane over in arrival order).
        self._pane_locks: dict[str, asyncio.Lock] = {}
        # The agent state last read off each runtime's screen.
        self._agent_states: dict[str, str] = {}
        self._records: TriggerRecords | None = None

    # ---- ServiceApp --------------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, SupervisorSettings)
        if ctx.redis is None or ctx.engine is None:
            raise RuntimeError("the supervisor needs Redis and PostgreSQL")
        self._ctx, self.settings = ctx, settings
        self.params = settings.params()
        self.kinds = settings.kinds()
        self._secret = load_or_create_secret(settings)
        self.metrics = SupervisorMetrics(ctx.registry)
        self._tmux = TmuxControl(settings.tmux_socket, settings.tmux_binary)
        self._driver = PaneDriver(self._tmux)
        self._registry = Registry(ctx.engine)
        await self._registry.load()
        self._state = SupervisorState(ctx.redis)
        self._records = TriggerRecords(ctx, ctx.redis)
        recovered = await self._state.release_written({Phase.DELIVERING.value, Phase.AWAITING_ACK.value})
        if recovered:
            log.info(
                "%d trigger(s) were being typed when the supervisor stopped; looking at their panes",
                recovered,
            )
        if ctx.bus.connected:
            await ctx.bus.subscribe(subjects.SUPERVISOR_ACK, pb.AckTriggerRequest, self._on_bus_ack)
        for name, coro in (
            ("supervisor-queue", self._queue_loop()),
            ("supervisor-reconcile", self._reconcile_loop()),
            ("supervisor-writer", self._writer()),
            ("supervisor-outbox", self.records.drain_forever()),
        ):
            self._tasks.append(asyncio.create_task(coro, name=name))

    async def stop(self) -> None:
        for task in [*self._tasks, *self._inflight.values()]:
            task.cancel()
        for task in [*self._tasks, *self._inflight.values()]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        await self._drain_writes()
        if self._tmux is not None:
            with contextlib.suppress(Exception):
                if self._tmux.connected:
                    await self._tmux.command("kill-session", "-t", f"={CONTROL_SESSION}")
            await self._tmux.close()

    def routers(self) -> Iterable[APIRouter]:
        return [supervisor_router(self)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_SupervisorServiceServicer_to_server(SupervisorServicer(self), server)
        return [pb.DESCRIPTOR.services_by_name["SupervisorService"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        tmux = self._tmux
        if tmux is not None and tmux.connected:
            status = DependencyStatus(
                True, f"control connection on {tmux.socket or 'the default server'}", False
            )
        else:
            status = DependencyStatus(True, self._tmux_problem or "connects on first use", required=False)
        return {"tmux": status}

    # ---- pieces -------------------------------------------------------------------------------------

    @property
    def ctx(self) -> ServiceContext:
        assert self._ctx is not None
        return self._ctx

    @property
    def registry(self) -> Registry:
        assert self._registry is not None
        return self._registry

    @property
    def records(self) -> TriggerRecords:
        assert self._records is not None
        return self._records

    @property
    def state(self) -> SupervisorState:
        assert self._state is not None
        return self._state

    @property
    def tmux(self) -> TmuxControl:
        assert self._tmux is not None
        return self._tmux

    @property
    def driver(self) -> PaneDriver:
        assert self._driver is not None
        return self._driver

    @property
    def m(self) -> SupervisorMetrics:
        assert self.metrics is not None
        return self.metrics

    @property
    def s(self) -> SupervisorSettings:
        assert self.settings is not None
        return self.settings

    # ---- section 15: who may call ---------------------------------------------------------------

    def authenticate(self, token: str | None) -> Claims:
        if not token:
            raise Unauthenticated("a signed service token is required (Authorization: Bearer ...)")
        try:
            return verify_token(self._secret, token, now=time.time())
        except TokenError as error:
            raise Unauthenticated(f"the service token was refused: {error}") from None

    @staticmethod
    def _need(claims: Claims, scope: str, workspace_id: str | None = None, runtime_id: str = "") -> None:
        if not (claims.has(scope) or (runtime_id and claims.owns_runtime(runtime_id))):
            raise PermissionDenied(f"the caller {claims.subject!r} lacks the {scope!r} scope")
        if workspace_id is not None and not claims.allows_workspace(workspace_id):
            raise PermissionDenied(f"the caller {claims.subject!r} may not target workspace {workspace_id!r}")

    def identity_proof(self, nonce: str) -> str:
        """GET /v1/identity: proof that this server holds the token secret and listens on its port
        (never the secret itself)."""
        return identity.identity_proof(self._secret, nonce, self.s.http_port)

    def issue(self, subject: str, scopes: set[str], workspaces: set[str], ttl: float | None = None) -> str:
        return issue_token(
            self._secret, subject=subject, scopes=scopes, workspaces=workspaces, now=time.time(),
            ttl_secs=ttl or self.s.token_ttl_secs,
        )  # fmt: skip

    def _runtime(self, runtime_id: str, claims: Claims, scope: str) -> RuntimeRecord:
        record = self.registry.get(runtime_id)
        if record is None:
            raise NotFound(f"no runtime {runtime_id!r} is registered")
        self._need(claims, scope, record.workspace_id, runtime_id=runtime_id if scope == "operate" else "")
        return record

    def _runtime_message(self, record: RuntimeRecord) -> pb.Runtime:
        state = (
            "exited"
            if record.status is RuntimeStatus.OFFLINE
            else self._agent_states.get(record.runtime_id, "")
        )
        return runtime_message(record, state)

    # ---- registry: section 10.1, 10.3, 10.4 --------------------------------------------------------

    async def register(self, req: pb.RegisterRuntimeRequest, claims: Claims) -> pb.RegisterRuntimeResponse:
        _require_id("agent_id", req.agent_id)
        _require_id("workspace_id", req.workspace_id)
        self._need(claims, "operate", req.workspace_id)
        backend = req.pty_backend or "tmux"
        if backend != "tmux":
            raise InvalidArgument(f"pty_backend {backend!r} is not supported here; use 'tmux'")
        if not req.pty_target:
            raise InvalidArgument("pty_target is required (a tmux pane such as %3 or session:window.pane)")
        pane_id = req.pty_target
        pid = req.pid
        with contextlib.suppress(TmuxError, TimeoutError, ValueError):
            probe = await self.tmux.probe(req.pty_target)
            pane_id, pid = probe.pane_id, pid or probe.pane_pid
        cwd = req.cwd or _process_cwd(pid)
        record = RuntimeRecord(
            runtime_id=f"rt-{uuid.uuid4().hex[:12]}",
            agent_id=req.agent_id,
            workspace_id=req.workspace_id,
            pty_target=pane_id,
            registered_at=time.time(),
            session_id=req.session_id,
            pty_backend=backend,
            pid=pid,
            kind=req.kind or "generic",
            role=req.role,
            managed=True,
            cwd=cwd,
        )
        await self.registry.add(record)
        await self._audit(claims.subject, "supervisor.register", record.runtime_id, "registered",
                    agent_id=req.agent_id, workspace_id=req.workspace_id, pty_target=pane_id, pid=pid)  # fmt: skip
        return pb.RegisterRuntimeResponse(
            runtime_id=record.runtime_id, status=record.status.value, runtime=self._runtime_message(record)
        )

    async def heartbeat(self, req: pb.HeartbeatRuntimeRequest, claims: Claims) -> pb.Runtime:
        record = self._runtime(req.runtime_id, claims, "operate")
        status = req.status or "active"
        if status not in ("active", "idle"):
            raise InvalidArgument(f"status must be 'active' or 'idle', not {status!r}")
        now = time.time()
        activity = to_epoch(req.last_activity_at) if req.HasField("last_activity_at") else now
        record = await self.registry.change(
            record.runtime_id, status=RuntimeStatus(status), last_heartbeat_at=now, last_activity_at=activity
        )
        await self.state.bump_progress(record.runtime_id)
        self._acknowledge_runtime(record.runtime_id, "heartbeat")
        return self._runtime_message(record)

    async def deregister(self, req: pb.DeregisterRuntimeRequest, claims: Claims) -> pb.Runtime:
        record = self._runtime(req.runtime_id, claims, "operate")
        reason = req.reason or "deregistered"
        record = await self.registry.change(
            record.runtime_id, status=RuntimeStatus.OFFLINE, offline_reason=reason, operator_busy=False
        )
        await self._audit(
            claims.subject, "supervisor.deregister", record.runtime_id, "offline", reason=reason
        )
        return self._runtime_message(record)

    async def list_runtimes(self, req: pb.ListRuntimesRequest, claims: Claims) -> pb.ListRuntimesResponse:
        self._need(claims, "read", req.workspace_id or None)
        found = self.registry.query(
            workspace_id=req.workspace_id, agent_id=req.agent_id, include_offline=req.include_offline
        )
        return pb.ListRuntimesResponse(
            runtimes=[self._runtime_message(r) for r in found if claims.allows_workspace(r.workspace_id)]
        )

    async def get_runtime(self, req: pb.GetRuntimeRequest, claims: Claims) -> pb.Runtime:
        return self._runtime_message(self._runtime(req.runtime_id, claims, "read"))

    async def set_paused(self, req: pb.SetRuntimePausedRequest, claims: Claims) -> pb.Runtime:
        record = self._runtime(req.runtime_id, claims, "operate")
        if not claims.has("operate"):
            raise PermissionDenied("pausing a runtime needs the 'operate' scope")
        record = await self.registry.change(record.runtime_id, paused=req.paused)
        await self._audit(claims.subject, "supervisor.pause" if req.paused else "supervisor.unpause",
                    record.runtime_id, "paused" if req.paused else "running", reason=req.reason)  # fmt: skip
        return self._runtime_message(record)

    async def logs(self, req: pb.RuntimeLogsRequest, claims: Claims) -> pb.RuntimeLogsResponse:
        record = self._runtime(req.runtime_id, claims, "read")
        count = min(req.lines or 50, 2000)
        try:
            lines = await self.tmux.command(
                "capture-pane", "-p", "-J", "-S", f"-{count}", "-t", record.pty_target
            )
        except (TmuxError, TimeoutError) as error:
            raise Conflict(f"the runtime's pane cannot be read: {error}") from None
        while lines and not lines[-1].strip():
            lines.pop()
        return pb.RuntimeLogsResponse(runtime_id=record.runtime_id, lines=_redact_lines(lines[-count:]))

    # ---- section 13: managed runtimes --------------------------------------------------------------

    async def spawn(self, req: pb.SpawnRuntimeRequest, claims: Claims) -> pb.SpawnRuntimeResponse:
        _require_id("agent_id", req.agent_id)
        _require_id("workspace_id", req.workspace_id)
        self._need(claims, "operate", req.workspace_id)
        if not req.command:
            raise InvalidArgument("command is required: the agent's argument vector (no shell)")
        if req.kind and req.kind not in self.kinds.kinds:
            known = ", ".join(sorted(self.kinds.kinds))
            raise InvalidArgument(f"kind must be a configured agent kind ({known})")
        if req.cwd and not await asyncio.to_thread(os.path.isdir, req.cwd):
            raise InvalidArgument("cwd must be an existing directory")
        try:
            record = await self._spawn(
                workspace_id=req.workspace_id, agent_id=req.agent_id, role=req.role, kind=req.kind or "generic",
                argv=list(req.command), session_id=req.session_id, cwd=req.cwd or None,
            )  # fmt: skip
        except (TmuxError, TimeoutError, OSError) as error:
            raise Unavailable(f"tmux could not start the agent: {error}") from None
        await self._audit(claims.subject, "supervisor.spawn", record.runtime_id, "started",
                    agent_id=req.agent_id, workspace_id=req.workspace_id, role=req.role, kind=record.kind)  # fmt: skip
        session = _session_name(self.s.session_prefix, req.workspace_id)
        return pb.SpawnRuntimeResponse(
            runtime=self._runtime_message(record), attach_command=attach_command(self.s.tmux_socket, session)
        )

    async def _spawn(
        self, *, workspace_id: str, agent_id: str, role: str, kind: str, argv: list[str], session_id: str,
        cwd: str | None = None,
    ) -> RuntimeRecord:  # fmt: skip
        runtime_id = f"rt-{uuid.uuid4().hex[:12]}"
        cwd = cwd or None
        env = self._runtime_env(runtime_id, workspace_id)
        session = _session_name(self.s.session_prefix, workspace_id)
        window = re.sub(r"[^A-Za-z0-9_-]", "_", role or agent_id)[:30]
        pane_id, pid = await self.tmux.start_agent(session, window, argv, env=env, cwd=cwd)
        record = RuntimeRecord(
            runtime_id=runtime_id, agent_id=agent_id, workspace_id=workspace_id, pty_target=pane_id,
            registered_at=time.time(), session_id=session_id, pid=pid, kind=kind, role=role, managed=True,
            command=tuple(argv), cwd=cwd or _process_cwd(pid),
        )  # fmt: skip
        return await self.registry.add(record)

    def _runtime_env(self, runtime_id: str, workspace_id: str) -> dict[str, str]:
        """What an agent started by the supervisor gets to acknowledge and heartbeat."""
        token = self.issue(f"runtime:{runtime_id}", {f"runtime:{runtime_id}"}, {workspace_id}, ttl=30 * 86400)
        return {
            "KRONII_RUNTIME_ID": runtime_id,
            "KRONII_RUNTIME_TOKEN": token,
            "KRONII_SUPERVISOR_URL": f"http://{_connect_host(self.s.host)}:{self.s.http_port}",
        }

    # ---- acknowledgements (section 12) -------------------------------------------------------------

    async def ack(self, req: pb.AckTriggerRequest, claims: Claims | None) -> pb.AckTriggerResponse:
        trigger_id = req.trigger_id
        if not trigger_id and not req.runtime_id:
            raise InvalidArgument("give trigger_id or runtime_id")
        if req.runtime_id:
            record = self.registry.get(req.runtime_id)
            if record is None:
                raise NotFound(f"no runtime {req.runtime_id!r} is registered")
            if claims is not None:
                self._need(claims, "operate", record.workspace_id, runtime_id=req.runtime_id)
            await self.state.bump_progress(req.runtime_id)
            ids = self._acknowledge_runtime(req.runtime_id, "ack")
            return pb.AckTriggerResponse(accepted=bool(ids) or True, trigger_id=ids[0] if ids else "")
        event = self._acks.get(trigger_id)
        if event is None:
            stored = await self.state.get_outcome(trigger_id)
            if stored is None:
                raise NotFound(f"no trigger {trigger_id!r}")
            return pb.AckTriggerResponse(accepted=False, trigger_id=trigger_id)
        self._ack_source[trigger_id] = "ack"
        event.set()
        return pb.AckTriggerResponse(accepted=True, trigger_id=trigger_id)

    def _acknowledge_runtime(self, runtime_id: str, how: str) -> list[str]:
        ids = sorted(self._awaiting.get(runtime_id, set()))
        for trigger_id in ids:
            self._ack_source.setdefault(trigger_id, how)
            if trigger_id in self._acks:
                self._acks[trigger_id].set()
        return ids

    async def _on_bus_ack(self, _subject: str, message: pb.AckTriggerRequest) -> None:
        try:
            await self.ack(message, None)
        except KroniiError as error:
            log.info("an ack on the bus was not taken: %s", error.message)

    # ---- section 10.2: trigger_runtime ----------------------------------------------------------------

    async def trigger(
        self, req: pb.TriggerRuntimeRequest, claims: Claims, request_id: str = ""
    ) -> pb.TriggerOutcome:
        started = time.perf_counter()
        self.m.requests.inc()
        _require_id("trigger_id", req.trigger_id)
        _require_id("agent_id", req.agent_id)
        _require_id("workspace_id", req.workspace_id)
        if req.thread_id:
            _require_id("thread_id", req.thread_id)
        self._need(claims, "trigger", req.workspace_id)
        if self.ctx.postgres_down_since is not None:
            # Nothing is typed that could not be recorded: refuse at the door while PostgreSQL is away.
            raise Unavailable("PostgreSQL is not reachable; nothing was typed, try again shortly")
        if req.force_override and not req.reason.startswith(_OVERRIDE_PREFIXES):
            raise InvalidArgument(
                "force_override is for explicit operator intent: reason must start with "
                "'human_override:' or 'coordinator_override:'",
            )
        try:
            payload = clean_prompt(
                req.prompt,
                max_bytes=self.params.max_payload_bytes,
                literal_max_chars=self.params.literal_max_chars,
            )
        except PayloadError as error:
            raise InvalidArgument(f"prompt refused: {error}") from None
        if req.ack_timeout_ms and not 50 <= req.ack_timeout_ms <= 600_000:
            raise InvalidArgument("ack_timeout_ms must be between 50 and 600000")
        now = time.time()
        first = {"trigger_id": req.trigger_id, "result": PENDING, "agent_id": req.agent_id,
                 "workspace_id": req.workspace_id, "thread_id": req.thread_id}  # fmt: skip
        job = Job(
            trigger_id=req.trigger_id, agent_id=req.agent_id, workspace_id=req.workspace_id,
            thread_id=req.thread_id, prompt=payload.text, literal=payload.literal,
            ack_timeout_secs=(req.ack_timeout_ms / 1000) if req.ack_timeout_ms else self.params.ack_timeout_secs,
            force=req.force_override, reason=req.reason, caller=claims.subject,
            request_id=request_id or uuid.uuid4().hex[:16], created_at=now, runtime_id=req.runtime_id,
            progress_marker=req.progress_marker, finding_key=req.finding_key,
        )  # fmt: skip
        # At least once: the job is in the queue (leased) before anything touches the pane.
        record = self._target(job)
        kind = self.kinds.get(record.kind if record else "generic")
        try:
            admitted, gathered = await asyncio.gather(
                self.state.admit(
                    req.trigger_id, first, self.s.dedupe_ttl_secs, job.to_dict(), now + self._lease(job)
                ),
                self._gather(job, record, kind, now),
            )
        except RedisError as error:
            # Nothing was typed yet; a retry with the same trigger_id gets the one outcome.
            raise Unavailable(
                f"the supervisor's queue (Redis) did not answer: {error}; retry with the same trigger_id",
            ) from None

        existing = admitted
        if existing is not None:
            if existing.get("result") == PENDING:
                return pb.TriggerOutcome(
                    trigger_id=req.trigger_id, result=Result.ALREADY_ACTIVE.value, error_code="TRIGGER_IN_FLIGHT",
                    duplicate=True, agent_id=req.agent_id, workspace_id=req.workspace_id, thread_id=req.thread_id,
                )  # fmt: skip
            return outcome_message({**existing, "duplicate": True})
        outcome = await self._run(job, gathered)
        if outcome.result not in (Result.DEFERRED.value, PENDING):
            self.m.latency.observe((time.perf_counter() - started) * 1000)
        return outcome

    async def get_trigger(self, req: pb.GetTriggerRequest, claims: Claims) -> pb.TriggerOutcome:
        stored = await self.state.get_outcome(req.trigger_id)
        if stored is None:
            async with self.ctx.engine.connect() as conn:  # type: ignore[union-attr]
                row = (
                    await conn.execute(select(triggers).where(triggers.c.trigger_id == req.trigger_id))
                ).first()
            if row is None:
                raise NotFound(f"no trigger {req.trigger_id!r}")
            m = row._mapping
            stored = {
                "trigger_id": m["trigger_id"], "result": m["result"], "delivery_backend": m["delivery_backend"],
                "error_code": m["error_code"], "runtime_id": m["runtime_id"], "fallback_chain": m["fallback_chain"],
                "agent_id": m["agent_id"], "workspace_id": m["workspace_id"], "thread_id": m["thread_id"],
                "delivered_at": m["delivered_at"].timestamp() if m["delivered_at"] else None,
            }  # fmt: skip
        self._need(claims, "read", stored.get("workspace_id", ""))
        if stored.get("result") == PENDING:
            stored = {**stored, "result": Result.ALREADY_ACTIVE.value, "error_code": "TRIGGER_IN_FLIGHT"}
        return outcome_message(stored)

    async def force(self, req: pb.ForceTriggerRequest, claims: Claims) -> pb.TriggerOutcome:
        if not req.reason.startswith(_OVERRIDE_PREFIXES):
            raise InvalidArgument(
                "force needs a reason starting with 'human_override:' or 'coordinator_override:'",
            )
        stored = await self.state.get_outcome(req.trigger_id)
        if stored is None:
            raise NotFound(f"no trigger {req.trigger_id!r}")
        self._need(claims, "operate", stored.get("workspace_id", ""))
        if stored.get("result") != Result.DEFERRED.value:
            raise Conflict(f"trigger {req.trigger_id!r} is {stored.get('result')}, not deferred")
        data = await self.state.take(req.trigger_id)
        if data is None:
            raise Conflict(f"trigger {req.trigger_id!r} is being worked on right now")
        job = replace(Job.from_dict(data), force=True, reason=req.reason, caller=claims.subject)
        await self.state.enqueue(job.trigger_id, job.to_dict(), time.time() + self._lease(job))
        return await self._run(job)

    async def unblock(self, req: pb.UnblockThreadRequest, claims: Claims) -> pb.UnblockThreadResponse:
        if not claims.has("operate"):
            raise PermissionDenied("unblocking a thread needs the 'operate' scope")
        data = await self.state.thread_state(req.agent_id, req.thread_id)
        state = ThreadState.from_dict(data) if data else ThreadState()
        await self.state.put_thread_state(req.agent_id, req.thread_id, ThreadState().to_dict())
        await self._audit(claims.subject, "supervisor.unblock", f"{req.agent_id}/{req.thread_id}", "unblocked",
                    reason=req.reason, was_blocked=state.blocked)  # fmt: skip
        return pb.UnblockThreadResponse(was_blocked=state.blocked)

    # ---- the lifecycle ----------------------------------------------------------------------------

    def _lease(self, job: Job) -> float:
        # Long enough for every delivery attempt and every start of the fallback chain.
        start = max(kind.start_timeout_secs for kind in self.kinds.kinds.values())
        return (
            job.ack_timeout_secs * (self.params.ack_retries + 1)
            + (self.params.resume_max_attempts + 1) * start
            + 30
        )

    def _job_params(self, job: Job) -> SupervisorParams:
        return replace(self.params, ack_timeout_secs=job.ack_timeout_secs)

    async def _run(
        self, job: Job, gathered: tuple[Snapshot, PaneFacts | None, bool] | None = None
    ) -> pb.TriggerOutcome:
        """Advance a job once, shielded so a client going away does not cut a delivery in half."""
        task = asyncio.create_task(self._advance(job, gathered))
        self._inflight[job.trigger_id] = task
        try:
            return await asyncio.shield(task)
        finally:
            if task.done():
                self._inflight.pop(job.trigger_id, None)
            else:
                task.add_done_callback(lambda _t: self._inflight.pop(job.trigger_id, None))

    def _target(self, job: Job) -> RuntimeRecord | None:
        if job.runtime_id:
            record = self.registry.get(job.runtime_id)
            if record is not None and record.status is not RuntimeStatus.OFFLINE:
                return record
            if record is not None and (record.agent_id, record.workspace_id) == (
                job.agent_id,
                job.workspace_id,
            ):
                return self.registry.for_agent(job.workspace_id, job.agent_id) or record
        return self.registry.for_agent(job.workspace_id, job.agent_id)

    async def _gather(
        self, job: Job, record: RuntimeRecord | None, kind: AgentKind, now: float
    ) -> tuple[Snapshot, PaneFacts | None, bool]:
        """Reads only (Redis counters, one look at the pane), so a trigger can start them while its
        trigger_id is being checked for a repeat."""
        alive = (pid_alive(record.pid) if record.pid else True) if record is not None else False
        look = (
            record is not None
            and record.status is not RuntimeStatus.OFFLINE
            and alive
            and not (record.paused and not job.force)
        )
        snapshot_call = self.state.snapshot(
            workspace_id=job.workspace_id, agent_id=job.agent_id, thread_id=job.thread_id,
            runtime_id=record.runtime_id if record else "", now=now, rate_window=self.params.rate_window_secs,
            crash_window=self.params.crash_loop_window_secs,
        )  # fmt: skip
        if look:
            assert record is not None
            snap, seen = await asyncio.gather(
                snapshot_call, self.driver.look(record.pty_target, record.pid, kind)
            )
            pane: PaneFacts | None = seen.facts
            self._agent_states[record.runtime_id] = seen.facts.agent_state
        else:
            snap, pane = await snapshot_call, None
        return snap, pane, alive

    async def _situation(
        self, job: Job, record: RuntimeRecord | None, kind: AgentKind, now: float,
        gathered: tuple[Snapshot, PaneFacts | None, bool] | None = None,
    ) -> Situation:  # fmt: skip
        snap, pane, alive = gathered or await self._gather(job, record, kind, now)
        blocked = loop = False
        if not job.admitted:
            verdict = observe_turn(
                ThreadState.from_dict(snap.thread) if snap.thread else ThreadState(),
                prompt_hash=hashlib.sha256(job.prompt.encode()).hexdigest()[:32],
                progress_marker=job.progress_marker, finding_key=job.finding_key,
                progress_epoch=snap.progress_epoch, params=self.params,
            )  # fmt: skip
            self._background(
                self.state.put_thread_state(job.agent_id, job.thread_id, verdict.state.to_dict())
            )
            blocked, loop = verdict.blocked, verdict.loop
            job.admitted = True
        guards = GuardFacts(
            recent_attempts=snap.attempts, recent_failures=snap.failures, consecutive_failures=snap.streak,
            last_failure_at=snap.last_failure_at, thread_blocked=blocked, repeats_without_progress=loop,
        )  # fmt: skip
        if record is None:
            return Situation(runtime=None, pane=None, guards=guards, force_override=job.force)
        facts = RuntimeFacts(
            runtime_id=record.runtime_id, kind=record.kind, managed=record.managed, status=record.status,
            pid_alive=alive, paused=record.paused, session_id=record.session_id,
            last_heartbeat_at=record.last_heartbeat_at,
        )  # fmt: skip
        return Situation(runtime=facts, pane=pane, guards=guards, force_override=job.force)

    def _background(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.create_task(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    async def _advance(
        self, job: Job, gathered: tuple[Snapshot, PaneFacts | None, bool] | None = None
    ) -> pb.TriggerOutcome:
        while True:
            record = self._target(job)
            if record is None:
                return await self._advance_on(job, record, gathered)
            lock = self._pane_locks.setdefault(record.pty_target, asyncio.Lock())
            if lock.locked():
                gathered = None  # what was seen before waiting for the pane is stale by then
            async with lock:
                now_target = self._target(job)
                # The agent moved to another pane (a spawn) while this one waited: queue there.
                if now_target is None or now_target.pty_target == record.pty_target:
                    return await self._advance_on(job, now_target, gathered)

    def _machine(self, job: Job, record: RuntimeRecord | None, kind: AgentKind) -> TriggerMachine:
        params = self._job_params(job)
        if job.machine:
            return TriggerMachine.from_dict(params, job.machine)
        # The session id of a Codex or Claude Code runtime may still be found in its files when
        # the resume runs (the reconcile loop looks for it meanwhile); never on the delivery path.
        findable = record is not None and (bool(record.session_id) or record.kind in _SESSION_KINDS)
        return TriggerMachine(
            params, can_resume=kind.can_resume and findable, can_spawn=kind.can_spawn and record is not None
        )

    async def _advance_on(
        self, job: Job, record: RuntimeRecord | None, gathered: tuple[Snapshot, PaneFacts | None, bool] | None
    ) -> pb.TriggerOutcome:
        """One step of the trigger's lifecycle, holding its pane."""
        kind = self.kinds.get(record.kind if record else "generic")
        machine = self._machine(job, record, kind)
        if machine.phase in (Phase.DELIVERING, Phase.AWAITING_ACK):
            # The record says the bytes were written before the supervisor stopped: look, never
            # type again.
            effects = deque(machine.handle(Signal.RESTARTED_AFTER_WRITE, time.time()))
            self._attempt(job, "recover", "written_before_restart", runtime_id=job.runtime_id)
        else:
            now = time.time()
            situation = await self._situation(job, record, kind, now, gathered)
            verdict = assess(situation, machine.params, now, machine.busy_since)
            if job.force or verdict.collision_gate is not CollisionGate.NOT_EVALUATED:
                job.gate = verdict.collision_gate.value
            job.detail = _admission_detail(verdict.signal, situation)
            effects = deque(
                machine.handle(verdict.signal, now, defer_until=verdict.defer_until, code=verdict.code)
            )
            self._attempt(job, "admit", verdict.signal.value, code=verdict.code.value if verdict.code else "",
                          agent_state=situation.pane.agent_state if situation.pane else "",
                          **override_audit(requested=job.force, reason=job.reason,
                                           gate=verdict.collision_gate, applied=job.force))  # fmt: skip
            if record is not None and verdict.signal is Signal.RUNTIME_READY and record.operator_busy:
                record = await self.registry.change(record.runtime_id, operator_busy=False)
        payload = Payload(job.prompt, job.literal)
        while effects:
            effect = effects.popleft()
            signal = await self._perform(effect, job, machine, record, kind, payload)
            if isinstance(effect, Finish):
                return await self._finish(job, machine, effect, record)
            if isinstance(effect, Defer):
                return await self._defer(job, machine, effect, record)
            if signal is not None:
                if signal in (Signal.SPAWN_OK, Signal.RESUME_OK):
                    record = self._target(job) or record
                effects.extend(machine.handle(signal, time.time()))
        raise RuntimeError(f"trigger {job.trigger_id}: the lifecycle stopped in phase {machine.phase.value}")

    async def _perform(
        self, effect: Effect, job: Job, machine: TriggerMachine, record: RuntimeRecord | None, kind: AgentKind,
        payload: Payload,
    ) -> Signal | None:  # fmt: skip
        now = time.time()
        match effect:
            case Deliver(attempt=attempt):
                assert record is not None
                return await self._deliver(job, machine, record, kind, payload, attempt)
            case WaitAck(deadline=deadline):
                assert record is not None
                return await self._wait_ack(job, machine, record, kind, payload, deadline)
            case Resubmit():
                return None
            case MarkOperatorBusy():
                if record is not None and not record.operator_busy:
                    await self.registry.change(record.runtime_id, operator_busy=True)
                return None
            case EmitCollision(busy_since=busy_since):
                await self._emit_collision(job, machine, record, busy_since, now)
                return None
            case LaunchResume(attempt=attempt):
                assert record is not None
                return await self._resume(job, record, kind, attempt)
            case LaunchSpawn(reason=reason):
                assert record is not None
                return await self._respawn(job, record, kind, reason)
            case Finish() | Defer():
                return None
        return None

    async def _deliver(
        self, job: Job, machine: TriggerMachine, record: RuntimeRecord, kind: AgentKind, payload: Payload,
        attempt: int,
    ) -> Signal:  # fmt: skip
        self._background(self.state.record_attempt(job.agent_id, job.thread_id, job.trigger_id, attempt,
                                                   time.time(), self.params.rate_window_secs))  # fmt: skip
        try:
            if attempt == 1:
                base = await self.driver.baseline(record.pty_target, payload, kind)
                job.echoes_before, job.was_working = base.echoes, base.working
                job.runtime_id = record.runtime_id
                # Durable before the first byte: after a crash the record says "written", so the
                # prompt is looked for, never typed again.
                job.machine = machine.to_dict()
                await self.state.enqueue(job.trigger_id, job.to_dict(), time.time() + self._lease(job))
            written = await self.driver.write(record.pty_target, payload, kind, attempt=attempt)
        except (TmuxError, TimeoutError) as error:
            self._attempt(job, "deliver", "write_failed", attempt=attempt, error=str(error)[:200])
            job.detail = f"writing to pane {record.pty_target} failed: {error}"
            return Signal.WRITE_FAILED
        self._attempt(job, "deliver", "nothing_to_resend" if written.nothing else "written", attempt=attempt,
                      runtime_id=record.runtime_id, submit_only=written.submit_only, literal=payload.literal)  # fmt: skip
        return Signal.WRITTEN

    async def _emit_collision(
        self,
        job: Job,
        machine: TriggerMachine,
        record: RuntimeRecord | None,
        busy_since: float | None,
        now: float,
    ) -> None:
        self.m.collisions.inc()
        event = pb.CollisionEvent(
            trigger_id=job.trigger_id, runtime_id=record.runtime_id if record else "",
            agent_id=job.agent_id, workspace_id=job.workspace_id,
            fallback="resume" if machine.phase is Phase.RESUMING else machine.phase.value,
        )  # fmt: skip
        if busy_since is not None:
            event.busy_since.FromNanoseconds(int(busy_since * 1e9))
        event.at.FromNanoseconds(int(now * 1e9))
        await self._publish(subjects.SUPERVISOR_COLLISION, event)
        await self._audit(job.caller, "supervisor.collision", job.trigger_id, "fallback",
                    runtime_id=event.runtime_id, busy_since=busy_since)  # fmt: skip

    async def _discover_session(self, record: RuntimeRecord | None) -> str:
        """The agent's logical session, found in the files it writes; kept in the registry."""
        if record is None or record.session_id or record.kind not in _SESSION_KINDS:
            return record.session_id if record else ""
        try:
            found = await asyncio.to_thread(find_session_id, record.kind, record.pid, record.cwd)
        except OSError:
            return ""
        if found:
            await self.registry.change(record.runtime_id, session_id=found)
        return found

    async def _start_visible(
        self, record: RuntimeRecord, kind: AgentKind, argv: list[str], *, exec_style: bool, suffix: str
    ) -> tuple[StartCheck, RuntimeRecord | None]:
        """Start a resume or spawn in the workspace's tmux session, in the agent's directory; an
        interactive one that proves it started becomes the agent's runtime."""
        runtime_id = f"rt-{uuid.uuid4().hex[:12]}"
        name = re.sub(r"[^A-Za-z0-9_-]", "_", record.role or record.agent_id)[:24]
        check = await start_visible(
            self.tmux, session=_session_name(self.s.session_prefix, record.workspace_id),
            window=f"{name}-{suffix}" if suffix else name, argv=argv,
            env=self._runtime_env(runtime_id, record.workspace_id), cwd=record.cwd or None, kind=kind,
            exec_style=exec_style, status_dir=self.s.data_dir / "supervisor" / "exits",
        )  # fmt: skip
        if not check.ok or exec_style:
            return check, None
        new = await self.registry.add(RuntimeRecord(
            runtime_id=runtime_id, agent_id=record.agent_id, workspace_id=record.workspace_id,
            pty_target=check.pane_id, registered_at=time.time(), pid=check.pid, kind=record.kind,
            role=record.role, managed=True, command=tuple(argv), cwd=record.cwd,
            session_id=record.session_id if suffix == "resume" else "",
        ))  # fmt: skip
        if record.status is not RuntimeStatus.OFFLINE:
            # Superseded: deregistered, left on screen, never killed.
            await self.registry.change(record.runtime_id, status=RuntimeStatus.OFFLINE,
                                       offline_reason=f"superseded by {new.runtime_id}", operator_busy=False)  # fmt: skip
        return check, new

    async def _resume(self, job: Job, record: RuntimeRecord, kind: AgentKind, attempt: int) -> Signal:
        session_id = record.session_id or await self._discover_session(record)
        if not session_id and any("{session_id}" in part for part in kind.resume_argv):
            job.detail = "resume failed: the agent's session id is not known and none was found in its files"
            self._attempt(job, "resume", "failed", attempt=attempt, detail=job.detail)
            return Signal.RESUME_FAILED
        argv = render_argv(kind.resume_argv, {**self._values(job, record), "session_id": session_id})
        self.m.fallback_resume.inc()
        check, new = await self._start_visible(
            record, kind, argv, exec_style=kind.resume_style == "exec", suffix="resume"
        )
        self._attempt(job, "resume", "started" if check.ok else "failed", attempt=attempt, program=argv[0],
                      pane=check.pane_id, seen=check.seen, detail=check.detail, cwd=record.cwd)  # fmt: skip
        if new is not None:
            job.runtime_id = new.runtime_id
        if not check.ok:
            job.detail = f"resume failed: {check.detail}"
            await self.state.record_failure(job.workspace_id, job.agent_id, "resume", time.time(),
                                            self.params.crash_loop_window_secs)  # fmt: skip
            return Signal.RESUME_FAILED
        job.detail = f"resumed in pane {check.pane_id}: {check.detail}"
        return Signal.RESUME_OK

    async def _respawn(self, job: Job, record: RuntimeRecord, kind: AgentKind, reason: str) -> Signal:
        self.m.fallback_spawn.inc()
        argv = render_argv(kind.spawn_argv, self._values(job, record))
        check, new = await self._start_visible(record, kind, argv, exec_style=False, suffix="")
        self._attempt(job, "spawn", "started" if check.ok else "failed", reason=reason, pane=check.pane_id,
                      seen=check.seen, detail=check.detail, program=argv[0] if argv else "", cwd=record.cwd)  # fmt: skip
        if new is None:
            job.detail = f"spawn failed: {check.detail}"
            return Signal.SPAWN_FAILED
        job.runtime_id = new.runtime_id
        job.detail = f"spawned {new.runtime_id} in pane {new.pty_target}: {check.detail}"
        return Signal.SPAWN_OK

    def _values(self, job: Job, record: RuntimeRecord) -> dict[str, str]:
        return {"session_id": record.session_id, "prompt": job.prompt, "agent_id": job.agent_id,
                "workspace_id": job.workspace_id, "thread_id": job.thread_id}  # fmt: skip

    async def _wait_ack(
        self, job: Job, machine: TriggerMachine, record: RuntimeRecord, kind: AgentKind, payload: Payload,
        deadline: float,
    ) -> Signal:  # fmt: skip
        """Taken only when the agent shows it: the prompt left the box and its echo appeared or the
        agent started working; or a hook acknowledged it."""
        event = self._acks.setdefault(job.trigger_id, asyncio.Event())
        waiting = self._awaiting.setdefault(record.runtime_id, set())
        waiting.add(job.trigger_id)
        before = Baseline(job.echoes_before, job.was_working)
        # Taken is looked for at once; the prompt still in the box counts as typed-not-submitted
        # only after the kind's verify delay (the agent may not have read the key yet).
        patience = time.monotonic() + (0 if machine.recovered else kind.verify_delay_secs)
        try:
            while True:
                if event.is_set():
                    job.acked_by = self._ack_source.pop(job.trigger_id, "ack")
                    return Signal.ACKED
                seen = await self.driver.check(record.pty_target, payload, kind, before)
                if seen is Delivery.SUBMITTED:
                    job.acked_by = "record" if machine.recovered else "output"
                    return Signal.ACKED
                if seen is Delivery.TYPED and not job.typed_not_submitted and time.monotonic() >= patience:
                    job.typed_not_submitted = True
                    self.m.typed_not_submitted.inc()
                    effects = machine.handle(Signal.TYPED_NOT_SUBMITTED, time.time())
                    if any(isinstance(e, Resubmit) for e in effects):
                        await self.driver.resubmit(record.pty_target, payload, kind)
                        self._attempt(job, "resubmit", "typed_not_submitted", runtime_id=record.runtime_id)
                remaining = deadline - time.time()
                if remaining <= 0 or seen is Delivery.GONE:
                    self._attempt(job, "ack", "timeout", runtime_id=record.runtime_id, seen=seen.value)
                    if seen is Delivery.TYPED:
                        job.detail = (
                            "the prompt is still in the agent's input box: the submit key did not send it"
                        )
                        return Signal.STUCK_IN_BOX
                    job.detail = (
                        "the pane went away before the agent took the prompt" if seen is Delivery.GONE
                        else f"the prompt left the input box but the agent showed no sign of taking it within {job.ack_timeout_secs:g} s"
                    )  # fmt: skip
                    return Signal.ACK_TIMEOUT
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), min(0.02, remaining))
        finally:
            waiting.discard(job.trigger_id)
            self._acks.pop(job.trigger_id, None)

    async def _defer(
        self, job: Job, machine: TriggerMachine, effect: Defer, record: RuntimeRecord | None
    ) -> pb.TriggerOutcome:
        job.machine = machine.to_dict()
        await self.state.enqueue(job.trigger_id, job.to_dict(), effect.until)
        outcome = self._outcome(job, machine, Result.DEFERRED, "", effect.code.value, record)
        outcome["deferred_until"] = effect.until
        await self.state.put_outcome(job.trigger_id, outcome, self.s.dedupe_ttl_secs)
        self.m.outcomes.labels(Result.DEFERRED.value, effect.code.value).inc()
        self._attempt(job, "defer", effect.code.value, until=effect.until, **self._override(job))
        await self.records.commit(self._trigger_row(job, outcome), None)
        self._log(job, outcome)
        return outcome_message(outcome)

    async def _finish(
        self, job: Job, machine: TriggerMachine, effect: Finish, record: RuntimeRecord | None
    ) -> pb.TriggerOutcome:
        record = self._target(job) if effect.backend.value == "spawn" else record
        code = effect.code.value if effect.code else ""
        outcome = self._outcome(job, machine, effect.result, effect.backend.value, code, record)
        outcome["fallback_used"] = effect.fallback_used
        if effect.result in (Result.DELIVERED, Result.TIMEOUT) and effect.backend.value:
            outcome["delivered_at"] = time.time()
        await self.state.put_outcome(job.trigger_id, outcome, self.s.dedupe_ttl_secs)
        await self.state.done(job.trigger_id)
        if effect.result is Result.DELIVERED:
            self.m.delivered.labels(effect.backend.value).inc()
            await self.state.record_success(job.workspace_id, job.agent_id)
        elif effect.result is Result.TIMEOUT:
            self.m.timeouts.inc()
        if effect.result is Result.TIMEOUT or (effect.result is Result.FAILED and code not in (
            "THREAD_AUTO_BLOCKED", "TRIGGER_LOOP_SUPPRESSED")):  # fmt: skip
            await self.state.record_failure(job.workspace_id, job.agent_id, effect.result.value, time.time(),
                                            self.params.crash_loop_window_secs)  # fmt: skip
        self.m.outcomes.labels(effect.result.value, code).inc()
        # Durable before it is answered (or published): the row and its audit row, or the outbox.
        audit = {"actor": job.caller, "action": "supervisor.trigger", "subject": job.trigger_id,
                 "outcome": effect.result.value}  # fmt: skip
        await self.records.commit(self._trigger_row(job, outcome), {**audit, **dict(
                    request_id=job.request_id, agent_id=job.agent_id, workspace_id=job.workspace_id,
                    thread_id=job.thread_id, runtime_id=outcome["runtime_id"], reason=job.reason,
                    delivery_backend=effect.backend.value, error_code=code, fallback_chain=list(machine.chain),
                    **self._override(job))})  # fmt: skip
        await self._publish(subjects.SUPERVISOR_OUTCOME, outcome_message(outcome))
        self._log(job, outcome)
        return outcome_message(outcome)

    def _override(self, job: Job) -> dict[str, Any]:
        return override_audit(
            requested=job.force, reason=job.reason, gate=CollisionGate(job.gate), applied=job.force
        )

    def _outcome(
        self, job: Job, machine: TriggerMachine, result: Result, backend: str, code: str, record: RuntimeRecord | None
    ) -> dict[str, Any]:  # fmt: skip
        return {
            "trigger_id": job.trigger_id, "result": result.value, "delivery_backend": backend, "error_code": code,
            "runtime_id": record.runtime_id if record else "", "fallback_chain": list(machine.chain),
            "typed_not_submitted": job.typed_not_submitted, "attempts": machine.deliveries,
            "agent_id": job.agent_id, "workspace_id": job.workspace_id, "thread_id": job.thread_id,
            "acked_by": job.acked_by, "fallback_used": "", "delivered_at": None, "deferred_until": None,
            "detail": job.detail,
        }  # fmt: skip

    def _log(self, job: Job, outcome: dict[str, Any]) -> None:
        log.info(
            "trigger %s", outcome["result"],
            extra={"request_id": job.request_id, "trigger_id": job.trigger_id, "thread_id": job.thread_id,
                   "agent_id": job.agent_id, "runtime_id": outcome["runtime_id"], "result": outcome["result"],
                   "fallback_used": outcome.get("fallback_used", ""), "error_code": outcome["error_code"]},
        )  # fmt: skip

    # ---- background work ------------------------------------------------------------------------------

    async def _queue_loop(self) -> None:
        interval = min(0.2, self.params.recheck_secs / 4)
        while True:
            try:
                for trigger_id, data in await self.state.take_due(time.time(), lease=300):
                    if trigger_id in self._inflight:
                        continue
                    job = Job.from_dict(data)
                    await self.state.enqueue(job.trigger_id, data, time.time() + self._lease(job))
                    task = asyncio.create_task(self._run_queued(job))
                    self._inflight[trigger_id] = task
                    task.add_done_callback(self._forget(trigger_id))
                self.m.queue_depth.set(await self.state.queue_depth())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the trigger queue loop failed; retrying")
            await asyncio.sleep(interval)

    def _forget(self, trigger_id: str) -> Callable[[asyncio.Task[pb.TriggerOutcome]], None]:
        def forget(_task: asyncio.Task[pb.TriggerOutcome]) -> None:
            self._inflight.pop(trigger_id, None)

        return forget

    async def _run_queued(self, job: Job) -> pb.TriggerOutcome:
        try:
            return await self._advance(job)
        except Exception:
            log.exception("trigger %s failed in the queue worker", job.trigger_id)
            raise

    async def _reconcile_loop(self) -> None:
        while True:
            try:
                await self.reconcile(time.time())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reconciling the runtime registry failed")
            await asyncio.sleep(self.s.reconcile_interval_secs)

    async def reconcile(self, now: float) -> None:
        """Section 18: heartbeat expiry and PID/PTY validation."""
        stale = 0
        counts = dict.fromkeys(RuntimeStatus, 0)
        states = dict.fromkeys((state.value for state in AgentState), 0)
        for record in self.registry.all():
            if record.status is not RuntimeStatus.OFFLINE:
                reason = ""
                if record.pid and not pid_alive(record.pid):
                    reason = f"pid {record.pid} is gone"
                elif record.pty_backend == "tmux" and not await self._pane_alive(record.pty_target):
                    reason = f"pane {record.pty_target} is gone"
                if reason:
                    record = await self.registry.change(record.runtime_id, status=RuntimeStatus.OFFLINE,
                                                        offline_reason=reason, operator_busy=False)  # fmt: skip
                    await self.state.record_failure(record.workspace_id, record.agent_id, "offline", now,
                                                    self.params.crash_loop_window_secs)  # fmt: skip
                    await self._audit(
                        "supervisor", "supervisor.offline", record.runtime_id, "offline", reason=reason
                    )
                else:
                    states[await self._look_at(record)] += 1
                if (
                    not reason
                    and record.last_heartbeat_at is not None
                    and now - record.last_heartbeat_at > self.s.heartbeat_ttl_secs
                ):
                    stale += 1
                    if record.status is RuntimeStatus.ACTIVE:
                        record = await self.registry.change(record.runtime_id, status=RuntimeStatus.IDLE)
            counts[record.status] += 1
        for status, count in counts.items():
            self.m.runtimes.labels(status.value).set(count)
        for name, count in states.items():
            self.m.agent_states.labels(name).set(count)
        self.m.stale.set(stale)

    async def _look_at(self, record: RuntimeRecord) -> str:
        """Read the agent's state off its screen (for the list, the API and the gauge), and find its
        session id once the agent has written one."""
        look = await self.driver.look(record.pty_target, record.pid, self.kinds.get(record.kind))
        state = (
            look.facts.agent_state if look.facts.agent_in_foreground or not look.facts.exists else "exited"
        )
        self._agent_states[record.runtime_id] = state
        if not record.session_id:
            await self._discover_session(record)
        return state

    async def _pane_alive(self, target: str) -> bool:
        try:
            return await self.tmux.pane_exists(target)
        except (TmuxError, TimeoutError, OSError) as error:
            self._tmux_problem = f"tmux unavailable: {error}"
            return True  # no verdict without tmux: never mark a runtime offline on our own failure

    # ---- writes: attempts, trigger rows, audit -----------------------------------------------------

    def _attempt(self, job: Job, step: str, outcome: str, **detail: Any) -> None:
        self._queue_write("attempt", {"trigger_id": job.trigger_id, "at": datetime.now(UTC), "step": step,
                                      "outcome": outcome, "detail": detail})  # fmt: skip

    def _trigger_row(self, job: Job, outcome: dict[str, Any]) -> dict[str, Any]:
        at = datetime.now(UTC)
        return {
            "trigger_id": job.trigger_id, "agent_id": job.agent_id, "workspace_id": job.workspace_id,
            "thread_id": job.thread_id, "runtime_id": outcome["runtime_id"], "caller": job.caller,
            "reason": job.reason[:500], "result": outcome["result"], "delivery_backend": outcome["delivery_backend"],
            "error_code": outcome["error_code"], "fallback_chain": outcome["fallback_chain"],
            "created_at": datetime.fromtimestamp(job.created_at, UTC), "updated_at": at,
            "delivered_at": datetime.fromtimestamp(outcome["delivered_at"], UTC) if outcome["delivered_at"] else None,
            "detail": str(outcome.get("detail", ""))[:1000],
            "deferred_until": datetime.fromtimestamp(outcome["deferred_until"], UTC) if outcome["deferred_until"] else None,
        }  # fmt: skip

    async def _audit(self, actor: str, action: str, subject: str, outcome: str, **detail: Any) -> None:
        """Before the answer: committed, or waiting in the audit outbox (Redis) while PostgreSQL is away."""
        await self.ctx.record(actor=actor, action=action, subject=subject, outcome=outcome, **detail)

    def _queue_write(self, kind: str, fields: dict[str, Any]) -> None:
        try:
            self._writes.put_nowait((kind, fields))
        except asyncio.QueueFull:
            log.warning("the database writer is behind; dropping a %s row", kind)

    async def _writer(self) -> None:
        while True:
            batch = [await self._writes.get()]
            while not self._writes.empty() and len(batch) < 200:
                batch.append(self._writes.get_nowait())
            await self._write(batch)

    async def _drain_writes(self) -> None:
        batch: list[tuple[str, dict[str, Any]]] = []
        while not self._writes.empty():
            batch.append(self._writes.get_nowait())
        if batch:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._write(batch), 1.5)

    async def _write(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        ctx = self.ctx
        attempts = [f for k, f in batch if k == "attempt"]
        rows = {f["trigger_id"]: f for k, f in batch if k == "trigger"}
        try:
            assert ctx.engine is not None
            async with ctx.engine.begin() as conn:
                if attempts:
                    await conn.execute(insert(trigger_attempts), attempts)
                for row in rows.values():
                    stmt = pg_insert(triggers).values(**row)
                    update = {k: stmt.excluded[k] for k in row if k not in ("trigger_id", "created_at")}
                    await conn.execute(stmt.on_conflict_do_update(index_elements=["trigger_id"], set_=update))
        except Exception as error:
            log.warning("persisting %d supervisor rows failed: %s", len(batch), error)

    async def _publish(self, subject: str, message: Any) -> None:
        if not self.ctx.bus.connected:
            return
        try:
            await self.ctx.bus.publish(subject, message)
        except Exception as error:
            log.warning("publishing on %s failed: %s", subject, error)


def _admission_detail(signal: Signal, situation: Situation) -> str:
    """A sentence for the outcome when admission decides it (empty when delivery goes ahead)."""
    pane = situation.pane
    match signal:
        case Signal.OPERATOR_BUSY:
            if pane is not None and pane.draft:
                return "a person's unsent text is in the agent's input box; it is left alone"
            return "a person typed in the pane within the quiet window"
        case Signal.AGENT_BLOCKED | Signal.BLOCKED_TOO_LONG:
            dialog = pane.dialog if pane is not None else ""
            return f"a dialog waits for a person on the agent's screen: {dialog!r}; kronii never answers it"
        case Signal.AGENT_STARTING | Signal.STARTING_TOO_LONG:
            return "the agent has not drawn its input box yet"
        case Signal.PANE_NOT_AGENT:
            command = pane.foreground_command if pane is not None else ""
            return f"the pane's foreground process is {command!r}, not the registered agent"
        case Signal.RUNTIME_UNAVAILABLE | Signal.CRASH_LOOP | Signal.SESSION_STALE:
            return "the agent's process or pane is gone"
        case Signal.COLLISION_MAX_DEFER:
            return "a person kept typing past the maximum defer"
    return ""


def _process_cwd(pid: int) -> str:
    """The working directory of a process of ours (empty when it cannot be read)."""
    if pid <= 0:
        return ""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104 - compared, never bound


def _redact_lines(lines: list[str]) -> list[str]:
    """Pane text leaves the supervisor only through the redaction engine; an error withholds it."""
    global _redactor
    try:
        from kronii.redaction import Level, RedactionContext, RedactionEngine

        if _redactor is None:
            _redactor = (RedactionEngine(), RedactionContext(key=secrets.token_bytes(32)))
        engine, context = _redactor
        result = engine.redact("\n".join(lines), context=context)
        if result.level is Level.RED:
            return ["[withheld: the pane's text could not be shown safely]"]
        return [str(line) for line in result.text.split("\n")]
    except Exception:
        log.exception("redacting pane text failed; it is withheld")
        return ["[withheld: redaction failed]"]


_redactor: Any = None
