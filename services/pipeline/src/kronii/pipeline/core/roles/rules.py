"""The `rules` backend: deterministic roles without a model, the default. Same input, same output.

Extractor
- observe: one `activity` fragment (window kind and app), plus the artifact when the title names one;
- extract: the artifact (`file`, `page`, `meeting` or `cwd` by window kind) at the title's confidence,
  every detail of the title (project, language, domain, repository, reference, path ...), one
  `plugin_summary` per plugin item in the budget, the screenshot reference, and `resume` on LockEnd.

Synthesizer
- fragments of one kind with different values conflict: the highest confidence wins, then the
  window title over plugins (first-hand), then the smaller value (so the result is order-free);
- `context_hash`: sha256 of the merged "kind=value" lines, sorted;
- candidates, confidence from the facts found (>= 0.75 is "high"):
  file -> `related_tasks` (0.85 with a project, 0.45 without);
  page with repository and #reference -> `review` (0.85), other pages -> `related_tasks` (0.4);
  meeting -> `meeting_notes` (0.8 with a name or a plugin summary, 0.4 without);
  resume -> `resume` for the artifact (0.8), before any other candidate;
- cost label by the context size: up to 200 estimated tokens low, up to 1,000 medium, above high.

Planner: silent when there is no candidate, when the best one is not high confidence, when the
same context hash was planned within `repeat_window_ms`, or when the candidate was surfaced today
already (an IDE file suggests related tasks the first time it is focused today, not again);
otherwise notify. Silence sets the longer cooldown (seed row 14).

Notifier: nothing unless the plan notifies; else the best candidate with its sources, a snooze
and a disable entry point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.pipeline.core.budget import ItemSource, estimate_tokens
from kronii.pipeline.core.roles.values import (
    Called,
    CallRecord,
    Candidate,
    CostLabel,
    Fragment,
    Notification,
    NotificationAction,
    NotificationActionKind,
    Plan,
    PlanHistory,
    Role,
    RoleContext,
    Synthesis,
    confidence_label,
)
from kronii.pipeline.core.router import Family
from kronii.pipeline.core.states import CapturePreemption, TriggerKind
from kronii.pipeline.core.window_context import ContextKind

BACKEND_NAME = "rules"
_ARTIFACT_KIND = {
    ContextKind.IDE: "file",
    ContextKind.BROWSER: "page",
    ContextKind.MEETING: "meeting",
    ContextKind.TERMINAL: "cwd",
}
_PLUGIN_SUMMARY_CHARS = 280
_SOURCE_RANK = {"trigger": 0, "window": 1, "screenshot": 2}  # plugins rank after these


@dataclass(frozen=True, slots=True)
class RulesParams:
    repeat_window_ms: int = 30 * 60_000
    notify_cooldown_ms: int = 10 * 60_000
    silent_cooldown_ms: int = 20 * 60_000  # seed row 14: "Set longer cooldown"
    snooze_ms: int = 60 * 60_000


# ---- extractor --------------------------------------------------------------------------------


def extract(context: RoleContext, family: Family) -> list[Fragment]:
    window = context.window
    fragments: list[Fragment] = []
    if window is not None:
        artifact_kind = _ARTIFACT_KIND.get(window.kind, "artifact")
        if family is Family.OBSERVE:
            fragments.append(Fragment("activity", f"{window.kind}:{window.app}", 1.0, "window"))
        if window.artifact:
            fragments.append(Fragment(artifact_kind, window.artifact, window.confidence, "window"))
        if family is not Family.OBSERVE:
            fragments.append(Fragment("app", window.app, 1.0, "window"))
            fragments.extend(
                Fragment(key, value, window.confidence, "window")
                for key, value in sorted(window.detail.items())
            )
    if family is not Family.OBSERVE:
        for item in context.budget.items:
            if item.source is ItemSource.PLUGIN:
                text = " ".join(item.text.split())[:_PLUGIN_SUMMARY_CHARS]
                fragments.append(Fragment("plugin_summary", text, 0.6, f"plugin:{item.name}"))
            elif item.source is ItemSource.SCREENSHOT:
                fragments.append(Fragment("screenshot", item.name, 0.5, "screenshot"))
        if context.trigger is TriggerKind.LOCK_END and window is not None and window.artifact:
            fragments.append(Fragment("resume", window.artifact, 0.8, "trigger"))
    return fragments


# ---- synthesizer ------------------------------------------------------------------------------


def _rank(fragment: Fragment) -> tuple[float, int, str]:
    return (-fragment.confidence, _SOURCE_RANK.get(fragment.source, 3), fragment.value)


def merge(fragments: Sequence[Fragment]) -> tuple[tuple[Fragment, ...], tuple[str, ...]]:
    """One fragment per kind, except plugin summaries, which add up rather than conflict."""
    merged: list[Fragment] = []
    conflicts: list[str] = []
    by_kind: dict[str, list[Fragment]] = {}
    for fragment in fragments:
        by_kind.setdefault(fragment.kind, []).append(fragment)
    for kind in sorted(by_kind):
        group = sorted(by_kind[kind], key=_rank)
        if kind == "plugin_summary":
            merged.extend(sorted(set(group), key=lambda f: (f.source, f.value)))
            continue
        winner = group[0]
        merged.append(winner)
        losers = sorted({f.value for f in group if f.value != winner.value})
        if losers:
            conflicts.append(
                f"{kind}: kept {winner.value!r} ({winner.source}) over {', '.join(map(repr, losers))}"
            )
    return tuple(merged), tuple(conflicts)


def context_hash(fragments: Sequence[Fragment]) -> str:
    lines = sorted(f"{f.kind}={f.value}" for f in fragments)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def cost_label(fragments: Sequence[Fragment]) -> CostLabel:
    tokens = sum(estimate_tokens(f.value) + estimate_tokens(f.kind) for f in fragments)
    if tokens <= 200:
        return CostLabel.LOW
    return CostLabel.MEDIUM if tokens <= 1_000 else CostLabel.HIGH


def _candidate(
    action: str, subject: str, title: str, rationale: str, confidence: float, sources: set[str]
) -> Candidate:
    return Candidate(
        action=action,
        key=f"{action}:{subject}",
        title=title,
        rationale=rationale,
        confidence=confidence,
        confidence_label=confidence_label(confidence),
        sources=tuple(sorted(sources)),
    )


@dataclass(frozen=True, slots=True)
class _Facts:
    """The merged facts a candidate is made of; every candidate also credits the plugin summaries."""

    by_kind: dict[str, Fragment]
    plugin_sources: set[str]

    def value(self, kind: str) -> str:
        return self.by_kind[kind].value if kind in self.by_kind else ""

    def sources(self, *kinds: str) -> set[str]:
        return {self.by_kind[k].source for k in kinds if k in self.by_kind} | self.plugin_sources


def _resume_candidate(facts: _Facts) -> Candidate:
    artifact = facts.value("resume")
    return _candidate(
        "resume",
        artifact,
        f"Resume {artifact}",
        f"You were on {artifact} before the screen locked.",
        0.8,
        facts.sources("resume"),
    )


def _file_candidate(facts: _Facts) -> Candidate:
    file, project = facts.value("file"), facts.value("project")
    subject = f"{file}@{project}" if project else file
    where = f" in {project}" if project else ""
    return _candidate(
        "related_tasks",
        subject,
        f"Related tasks for {file}{where}",
        f"{file}{where} is open for the first time today; tasks that mention it may be worth a look.",
        0.85 if project else 0.45,
        facts.sources("file", "project"),
    )


def _page_candidate(facts: _Facts) -> Candidate:
    page, repository, reference = facts.value("page"), facts.value("repository"), facts.value("reference")
    if repository and reference:
        return _candidate(
            "review",
            f"{repository}{reference}",
            f"Review {reference} in {repository}",
            f"{reference} of {repository} is open in the browser.",
            0.85,
            facts.sources("page", "repository", "reference"),
        )
    return _candidate(
        "related_tasks", page, f"Related to {page}", f"The browser shows {page}.", 0.4, facts.sources("page")
    )


def _meeting_candidate(facts: _Facts) -> Candidate:
    meeting = facts.value("meeting")
    return _candidate(
        "meeting_notes",
        meeting,
        f"Notes for {meeting}",
        f"{meeting} is on: a note template with its agenda and attendees is ready.",
        0.8 if meeting or facts.plugin_sources else 0.4,
        facts.sources("meeting"),
    )


# The fact each candidate needs, in the order candidates are found (resume first).
_CANDIDATE_OF_FACT = (
    ("resume", _resume_candidate),
    ("file", _file_candidate),
    ("page", _page_candidate),
    ("meeting", _meeting_candidate),
)


def _candidates(facts: dict[str, Fragment], plugin_sources: set[str]) -> list[Candidate]:
    known = _Facts(facts, plugin_sources)
    return [make(known) for kind, make in _CANDIDATE_OF_FACT if kind in facts]


def synthesize(fragments: Sequence[Fragment]) -> Synthesis:
    merged, conflicts = merge(fragments)
    facts = {f.kind: f for f in merged if f.kind != "plugin_summary" and f.value}
    plugin_sources = {f.source for f in merged if f.kind == "plugin_summary"}
    # Resume first (the seed's LockEnd mapping), then by confidence; stable for equal ones.
    candidates = sorted(
        _candidates(facts, plugin_sources), key=lambda c: (c.action != "resume", -c.confidence)
    )
    return Synthesis(tuple(candidates), merged, conflicts, context_hash(merged), cost_label(merged))


# ---- planner ----------------------------------------------------------------------------------


def plan(synthesis: Synthesis, history: PlanHistory, params: RulesParams | None = None) -> Plan:
    params = params or RulesParams()
    now = history.now_ms

    def silent(reason: str, filters: tuple[str, ...] = ("title_changed", "activity_pulse")) -> Plan:
        return Plan(False, now + params.silent_cooldown_ms, params.silent_cooldown_ms, filters, reason)

    top = synthesis.top
    if top is None:
        return silent("nothing to suggest")
    if any(
        h == synthesis.context_hash and now - t < params.repeat_window_ms for h, t in history.recent_hashes
    ):
        return silent("same context within the repeat window")
    if top.confidence_label != "high":
        return silent(f"best candidate has {top.confidence_label} confidence")
    if top.key in history.surfaced_today:
        return silent("already suggested today")
    # A meeting's screenshot stays useful through a short focus change; anything else is stale.
    preemption = CapturePreemption.DOWNGRADE if top.action == "meeting_notes" else CapturePreemption.CANCEL
    return Plan(
        True,
        now + params.notify_cooldown_ms,
        params.notify_cooldown_ms,
        ("title_changed",),
        f"{top.action} with high confidence",
        preemption,
    )


# ---- notifier ---------------------------------------------------------------------------------


def _describe(source: str) -> str:
    if source.startswith("plugin:"):
        return f"plugin {source.removeprefix('plugin:')}"
    return {"window": "window title", "screenshot": "redacted screenshot", "trigger": "lock/unlock"}.get(
        source, source
    )


def notify(plan: Plan, synthesis: Synthesis, params: RulesParams | None = None) -> Notification | None:
    params = params or RulesParams()
    top = synthesis.top
    if not plan.notify or top is None:
        return None
    return Notification(
        title=top.title,
        body=top.rationale,
        source_summary="Based on: " + ", ".join(_describe(s) for s in top.sources),
        actions=(
            NotificationAction(
                NotificationActionKind.SNOOZE, "Snooze for an hour", snooze_ms=params.snooze_ms
            ),
            NotificationAction(
                NotificationActionKind.DISABLE, f"Stop {top.action} suggestions", target=top.action
            ),
        ),
        context_hash=synthesis.context_hash,
        candidate_key=top.key,
    )


# ---- backend ----------------------------------------------------------------------------------


def _record(role: Role, input_text: str, output_text: str) -> CallRecord:
    return CallRecord(
        role, BACKEND_NAME, estimate_tokens(input_text), estimate_tokens(output_text), latency_ms=0
    )


def _fragments_text(fragments: Sequence[Fragment]) -> str:
    return "\n".join(f"{f.kind}={f.value}" for f in fragments)


class RulesBackend:
    """`RoleBackend` over the pure functions above; token counts are the estimate of what a model
    would have read and written, so the audit compares backends on one scale."""

    def __init__(self, params: RulesParams | None = None) -> None:
        self._params = params or RulesParams()

    @property
    def name(self) -> str:
        return BACKEND_NAME

    async def extract(self, context: RoleContext, family: Family) -> Called[list[Fragment]]:
        fragments = extract(context, family)
        return Called(fragments, _record(Role.EXTRACTOR, context.budget.text(), _fragments_text(fragments)))

    async def synthesize(self, fragments: Sequence[Fragment]) -> Called[Synthesis]:
        synthesis = synthesize(fragments)
        output = "\n".join(c.title + c.rationale for c in synthesis.candidates)
        return Called(synthesis, _record(Role.SYNTHESIZER, _fragments_text(fragments), output))

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]:
        result = plan(synthesis, history, self._params)
        return Called(result, _record(Role.PLANNER, _fragments_text(synthesis.fragments), result.reason))

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]:
        result = notify(plan, synthesis, self._params)
        output = f"{result.title}\n{result.body}" if result else ""
        return Called(result, _record(Role.NOTIFIER, plan.reason, output))
