"""The Router (seed 000, stage 3): per batch, a ContextPolicy and a prompt family, following the
seed's trigger-to-prompt mapping:

- StateChanged Active->Passive: observe; Defer if it repeats within 5 minutes;
- FocusChanged to an IDE, a browser or a meeting: extract the artifact (file/url/agenda);
- TitleChanged high-frequency: Defer;
- LockEnd: extract the unfinished context (resume);
- PluginEvent(meeting_joined): extract attendees/agenda.

Everything else is observed with the Base snapshot only (the fast gate). A locked desktop, a focus
thrash, or a user gone inactive is deferred.

A screenshot is asked for only when the text signal is weak (a meeting or video window, an image
or diff viewer, an IDE/browser title without an artifact) AND a ScreenCapture plugin is installed,
enabled and able to snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from kronii.pipeline.core.deferral import DeferReason
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.states import PolicyKind, TriggerKind
from kronii.pipeline.core.window_context import ContextKind, WindowContext, extract_window_context


class Family(StrEnum):
    """Prompt families (seed 000)."""

    OBSERVE = "observe"  # fast gate: decide if worth processing
    EXTRACT = "extract"  # pull key facts from current focus/context
    SYNTHESIZE = "synthesize"  # merge into suggestion/actionable
    PLAN = "plan"  # choose next wakeup, triggers, and cooldown
    NOTIFY = "notify"  # produce user-facing message (or no-op)


class Capability(StrEnum):
    SNAPSHOT = "snapshot"
    EVENTS = "events"
    SUMMARIZE = "summarize"
    REDACT_HINT = "redact_hint"


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A PluginRegistry row. Higher `priority` comes first in the context budget; `risk_score` is
    0 (harmless) .. 1 (handles secrets)."""

    app_id: str
    installed: bool
    enabled: bool
    capabilities: frozenset[Capability]
    risk_score: float = 0.0
    priority: int = 0

    @property
    def usable(self) -> bool:
        return self.installed and self.enabled


@dataclass(frozen=True, slots=True)
class BaseSnapshot:
    """The daemon's latest snapshot: what the Router needs at the least ("minimal fields")."""

    at_ms: int
    activity_state: str = "active"
    app: str = ""
    wm_class: str = ""
    title: str = ""
    window_id: int = 0
    pid: int = 0
    app_start_time_ms: int = 0
    locked: bool = False


@dataclass(frozen=True, slots=True)
class BaseOnly:
    @property
    def kind(self) -> PolicyKind:
        return PolicyKind.BASE_ONLY


@dataclass(frozen=True, slots=True)
class PluginLite:
    """Plugin summaries of `apps` (highest priority first)."""

    apps: tuple[str, ...]

    @property
    def kind(self) -> PolicyKind:
        return PolicyKind.PLUGIN_LITE


@dataclass(frozen=True, slots=True)
class PluginFull:
    """Full plugin snapshots of `apps` (highest priority first)."""

    apps: tuple[str, ...]

    @property
    def kind(self) -> PolicyKind:
        return PolicyKind.PLUGIN_FULL


@dataclass(frozen=True, slots=True)
class Defer:
    reason: DeferReason

    @property
    def kind(self) -> PolicyKind:
        return PolicyKind.DEFER


ContextPolicy = BaseOnly | PluginLite | PluginFull | Defer


@dataclass(frozen=True, slots=True)
class RouteDecision:
    policy: ContextPolicy
    family: Family
    needs_screenshot: bool
    reason: str
    window: WindowContext | None = None

    @property
    def kind(self) -> PolicyKind:
        return self.policy.kind


@dataclass(frozen=True, slots=True)
class RouterLimits:
    repeat_passive_ms: int = 5 * 60_000  # seed: "Defer if repeated within 5 minutes"
    # More focus changes than this within the window is thrash: the user is looking for something.
    focus_thrash_changes: int = 6
    focus_thrash_window_ms: int = 30_000
    # Plugins riskier than this give summaries only; riskier than `plugin_max_risk`, nothing.
    plugin_full_max_risk: float = 0.5
    plugin_max_risk: float = 0.9
    screencapture_app_id: str = "screencapture"


@dataclass(frozen=True, slots=True)
class RouterHistory:
    """What the Router remembers between rounds (plain data; `after` gives the next one)."""

    last_passive_observe_ms: int | None = None
    focus_changes_ms: tuple[int, ...] = ()

    def after(
        self, batch: Batch, decision: RouteDecision, now_ms: int, limits: RouterLimits
    ) -> RouterHistory:
        focus = self.focus_changes_ms
        if batch.kind is TriggerKind.FOCUS_CHANGED:
            recent = tuple(t for t in focus if now_ms - t < limits.focus_thrash_window_ms)
            focus = (*recent, batch.last.at_ms)[-(limits.focus_thrash_changes + 1) :]
        passive = self.last_passive_observe_ms
        if _active_to_passive(batch) and decision.kind is not PolicyKind.DEFER:
            passive = now_ms
        return RouterHistory(last_passive_observe_ms=passive, focus_changes_ms=focus)


_IMAGE_OR_DIFF_CLASSES = (
    "eog",
    "feh",
    "gimp",
    "gthumb",
    "ristretto",
    "gwenview",
    "loupe",
    "meld",
    "kdiff3",
    "kompare",
)
_IMAGE_TITLE = re.compile(
    r"\.(png|jpe?g|gif|webp|svg|bmp|tiff?)\b|\bdiff\b|\bcompare\b|\bfiles changed\b", re.IGNORECASE
)
_VIDEO_TITLE = re.compile(r"\b(youtube|vimeo|twitch|netflix)\b|\bvideo\b", re.IGNORECASE)
_ARTIFACT_KINDS = frozenset({ContextKind.IDE, ContextKind.BROWSER, ContextKind.MEETING})
# Plugins that read what a terminal shows (the tmux plugin summarises the focused pane).
TERMINAL_PLUGIN_APPS = frozenset({"tmux"})


def _active_to_passive(batch: Batch) -> bool:
    trigger = batch.last
    return (
        trigger.kind is TriggerKind.STATE_CHANGED
        and trigger.from_state == "active"
        and trigger.to_state == "passive"
    )


def _visual(base: BaseSnapshot) -> bool:
    """An image or diff viewer: what matters is on screen, not in the title."""
    cls = base.wm_class.lower()
    return any(name in cls for name in _IMAGE_OR_DIFF_CLASSES) or bool(_IMAGE_TITLE.search(base.title))


def text_is_weak(base: BaseSnapshot, window: WindowContext) -> bool:
    """The title cannot say what is on screen: a meeting or video, an image or a diff, or an
    IDE/browser window whose title names no artifact."""
    if window.kind is ContextKind.MEETING or _visual(base):
        return True
    if window.kind is ContextKind.BROWSER and _VIDEO_TITLE.search(base.title):
        return True
    return window.kind in _ARTIFACT_KINDS and not window.has_artifact


def _usable(plugins: Sequence[PluginInfo], limits: RouterLimits) -> list[PluginInfo]:
    return [p for p in plugins if p.usable and p.risk_score <= limits.plugin_max_risk]


def _capture_plugin(plugins: Sequence[PluginInfo], limits: RouterLimits) -> PluginInfo | None:
    return next(
        (
            p
            for p in _usable(plugins, limits)
            if p.app_id == limits.screencapture_app_id and Capability.SNAPSHOT in p.capabilities
        ),
        None,
    )


def _context_plugins(
    plugins: Sequence[PluginInfo], app_ids: set[str], limits: RouterLimits
) -> list[PluginInfo]:
    """Plugins of the given apps that can give context (snapshot or summary), by priority."""
    wanted = {a.lower() for a in app_ids if a}
    chosen = [
        p
        for p in _usable(plugins, limits)
        if p.app_id.lower() in wanted and p.capabilities & {Capability.SNAPSHOT, Capability.SUMMARIZE}
    ]
    return sorted(chosen, key=lambda p: (-p.priority, p.app_id))


def _extract(
    base: BaseSnapshot,
    window: WindowContext,
    plugins: Sequence[PluginInfo],
    limits: RouterLimits,
    reason: str,
    extra_apps: set[str] | None = None,
) -> RouteDecision:
    chosen = _context_plugins(plugins, {window.app, base.app, *(extra_apps or set())}, limits)
    capture = _capture_plugin(plugins, limits)
    snapshot_by_plugin = any(Capability.SNAPSHOT in p.capabilities for p in chosen)
    needs_screenshot = capture is not None and text_is_weak(base, window) and not snapshot_by_plugin
    if needs_screenshot and capture is not None:
        chosen = [*chosen, capture]
    if not chosen:
        return RouteDecision(BaseOnly(), Family.EXTRACT, False, reason, window)
    apps = tuple(p.app_id for p in chosen)
    full = all(
        Capability.SNAPSHOT in p.capabilities and p.risk_score <= limits.plugin_full_max_risk for p in chosen
    )
    policy: ContextPolicy = PluginFull(apps) if full else PluginLite(apps)
    return RouteDecision(policy, Family.EXTRACT, needs_screenshot, reason, window)


def _observe(reason: str, window: WindowContext) -> RouteDecision:
    return RouteDecision(BaseOnly(), Family.OBSERVE, False, reason, window)


def _defer(reason: DeferReason, why: str, window: WindowContext) -> RouteDecision:
    return RouteDecision(Defer(reason), Family.OBSERVE, False, why, window)


@dataclass(frozen=True, slots=True)
class _Step:
    """What every branch of `route` reads about the moment: the snapshot, its window and the plugins."""

    base: BaseSnapshot
    window: WindowContext
    plugins: Sequence[PluginInfo]
    limits: RouterLimits

    def extract(self, reason: str, extra_apps: set[str] | None = None) -> RouteDecision:
        return _extract(self.base, self.window, self.plugins, self.limits, reason, extra_apps)


def _route_state_change(batch: Batch, history: RouterHistory, now_ms: int, step: _Step) -> RouteDecision:
    trigger = batch.last
    if trigger.to_state == "inactive":
        return _defer(DeferReason.LOW_VALUE, "user went inactive", step.window)
    if _active_to_passive(batch):
        last = history.last_passive_observe_ms
        if last is not None and now_ms - last < step.limits.repeat_passive_ms:
            return _defer(DeferReason.REPEATED, "Active->Passive repeated within 5 minutes", step.window)
        return _observe("Active->Passive: observe", step.window)
    return _observe(f"state {trigger.from_state or '?'}->{trigger.to_state or '?'}: observe", step.window)


def _route_focus_change(history: RouterHistory, now_ms: int, step: _Step) -> RouteDecision:
    window, limits = step.window, step.limits
    recent = [t for t in history.focus_changes_ms if now_ms - t < limits.focus_thrash_window_ms]
    if len(recent) + 1 > limits.focus_thrash_changes:
        return _defer(DeferReason.FOCUS_THRASH, "focus thrash", window)
    if window.kind in _ARTIFACT_KINDS or _visual(step.base):
        return step.extract(f"focus on {window.kind}: extract artifact")
    if window.kind is ContextKind.TERMINAL and _context_plugins(
        step.plugins, set(TERMINAL_PLUGIN_APPS), limits
    ):
        return step.extract("focus on terminal: extract from its pane", set(TERMINAL_PLUGIN_APPS))
    return _observe(f"focus on {window.kind} window: observe", window)


def _route_title_change(batch: Batch, step: _Step) -> RouteDecision:
    window = step.window
    if batch.high_frequency:
        return _defer(DeferReason.TITLE_CHURN, "high-frequency title changes", window)
    if window.kind in _ARTIFACT_KINDS and window.has_artifact:
        return step.extract(f"new {window.kind} artifact: extract")
    return _observe("title changed: observe", window)


def _route_plugin_event(batch: Batch, step: _Step) -> RouteDecision:
    trigger = batch.last
    if trigger.plugin_kind == "meeting_joined":
        return step.extract("meeting joined: extract attendees/agenda", {trigger.plugin_app_id})
    own = _context_plugins(step.plugins, {trigger.plugin_app_id}, step.limits)
    if own:
        policy = PluginLite(tuple(p.app_id for p in own))
        return RouteDecision(policy, Family.OBSERVE, False, "plugin event: observe", step.window)
    return _observe("plugin event from a plugin without context: observe", step.window)


def route(
    batch: Batch,
    base: BaseSnapshot,
    plugins: Sequence[PluginInfo],
    history: RouterHistory,
    now_ms: int,
    limits: RouterLimits | None = None,
) -> RouteDecision:
    """The policy and prompt family for `batch`, given the Base snapshot and the plugin registry."""
    step = _Step(base, extract_window_context(base.wm_class, base.title), plugins, limits or RouterLimits())
    if base.locked:
        return _defer(DeferReason.LOCKED, "desktop is locked", step.window)
    match batch.kind:
        case TriggerKind.STATE_CHANGED:
            return _route_state_change(batch, history, now_ms, step)
        case TriggerKind.FOCUS_CHANGED:
            return _route_focus_change(history, now_ms, step)
        case TriggerKind.TITLE_CHANGED:
            return _route_title_change(batch, step)
        case TriggerKind.LOCK_END:
            return step.extract("unlock: extract unfinished context to resume")
        case TriggerKind.PLUGIN_EVENT:
            return _route_plugin_event(batch, step)
        case _:
            return _observe(f"{batch.kind}: observe", step.window)
