"""`kronii critic doctor`: the hooks seen per shell, the spool and hint directory, the model, the
counts of every tier, the embedding queue, the mute, and a sentence for each thing that is wrong."""

from __future__ import annotations

from kronii.critic.core.doctor import DoctorReport, HookTally, RecordCounts, doctor_problems
from kronii.critic.ports import MemoryHealth, ModelInfo, PolicyStore, RedactionTally, RuntimePlaces
from kronii.critic.usecases.watch_embeddings import EmbeddingWatch

__all__ = ["Doctor"]


class Doctor:
    def __init__(
        self,
        *,
        memory: MemoryHealth,
        hooks: HookTally,
        places: RuntimePlaces,
        model: ModelInfo,
        embeddings: EmbeddingWatch,
        redactions: RedactionTally,
        policy: PolicyStore,
    ) -> None:
        self._memory = memory
        self._hooks = hooks
        self._places = places
        self._model = model
        self._embeddings = embeddings
        self._redactions = redactions
        self._policy = policy

    async def __call__(self) -> DoctorReport:
        counts = self._memory.counts()
        in_files, in_database = await self._memory.totals()
        report = DoctorReport(
            hooks=self._hooks.hooks(),
            spool=self._places.spool(),
            hints=self._places.hints(),
            model=self._model.model_state(),
            records=RecordCounts(
                ram=counts.ram,
                files=in_files,
                database=in_database,
                redactions=self._redactions.redactions_total(),
            ),
            embeddings=self._embeddings.state(),
            muted_until_ms=self._policy.current().mute_until_ms,
        )
        self._policy.current()  # read again if critic.toml changed, so its problem is today's
        policy_problem = self._policy.problem
        if policy_problem:
            report.problems.append(
                f"the critic policy is not in force: {policy_problem} (the last good one, or the defaults, is)"
            )
        if counts.waiting:
            report.problems.append(
                f"{counts.waiting} record(s) wait for room in the day files (is the data dir's disk full?);"
                " they are written there once it has room"
            )
        report.problems.extend(doctor_problems(report, counts.database_failures, counts.lost))
        return report
