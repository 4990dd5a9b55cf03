"""Conformance on real applications from Debian (issue 31): zenity and galculator (GTK3),
gnome-calculator and gnome-text-editor (GTK4), featherpad (Qt5) and a local page in Chromium, each
with the intents of conformance/table.py typed as a person would, run through a real vision engine
(rules planner) and a real input broker on one accessible desktop. Every case checks the engine's
answer and, independently, the effect on the app itself (its stdout or console, its objects read by
the tester's own AT-SPI reader): a wrong element or a `done` with no effect fails the case."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.infra import InfraUrls
from tests.integration.vision.conformance.apps import missing_programs
from tests.integration.vision.conformance.runner import (
    FALSE_DONE,
    RIGHT,
    WRONG_ELEMENT,
    AppKeeper,
    Result,
    run_case,
    summary,
)
from tests.integration.vision.conformance.table import CASES, Case
from tests.integration.vision.vision_desktop import A11yDesktop, start_a11y_desktop
from tests.integration.vision.vision_service_support import VisionEngine, start_vision

pytestmark = pytest.mark.e2e

# Apps a plan may open (R3): none of the ones the cases ask for.
SETTINGS = {"KRONII_VISION_NOTIFY": "false", "KRONII_VISION_ALLOWED_APPS": "terminal=xterm"}
RESULTS: list[Result] = []


@pytest.fixture(scope="module")
def desktop() -> Iterator[A11yDesktop]:
    missing = missing_programs()
    assert not missing, f"missing {missing}: run scripts/install_system_deps.sh as root"
    with start_a11y_desktop() as desktop:
        yield desktop


@pytest.fixture(scope="module")
def engine(
    infra: InfraUrls, migrated_database: str, desktop: A11yDesktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VisionEngine]:
    folder = tmp_path_factory.mktemp("conformance")
    with start_vision(infra, migrated_database, desktop, folder, settings=SETTINGS) as engine:
        yield engine
    print("\nconformance by toolkit:", summary(RESULTS))
    for result in RESULTS:
        if result.verdict != RIGHT:
            print(f"  {result.verdict}: {result.case.id}: {result.detail}")


@pytest.fixture(scope="module")
def keeper(desktop: A11yDesktop, engine: VisionEngine) -> Iterator[AppKeeper]:
    with AppKeeper(desktop) as keeper:
        yield keeper


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_intent_ends_as_the_table_says_and_its_effect_is_on_the_app(
    case: Case, engine: VisionEngine, keeper: AppKeeper
) -> None:
    result = run_case(engine.url, keeper, case, lambda: engine.proc.output)
    RESULTS.append(result)
    # Never excused, known limit or not: a wrong element, or done without the effect.
    assert result.verdict not in (WRONG_ELEMENT, FALSE_DONE), f"{result.verdict}: {result.detail}"
    if case.known_limit:
        assert result.verdict != RIGHT, f"{case.id} now ends right: take its known_limit out of the table"
        pytest.xfail(f"{case.known_limit}: {result.detail}")
    assert result.verdict == RIGHT, f"{case.why or 'expected done'}: {result.detail}"


def test_the_table_covers_six_apps_four_toolkits_and_eight_intents_each() -> None:
    programs = {case.app.split("-")[0] if case.app.startswith("zenity") else case.app for case in CASES}
    toolkits = {case.toolkit for case in CASES}
    per_program: dict[str, int] = {}
    for case in CASES:
        program = case.app.split("-")[0] if case.app.startswith("zenity") else case.app
        per_program[program] = per_program.get(program, 0) + 1
    assert len(programs) >= 6 and len(toolkits) >= 4, (programs, toolkits)
    assert min(per_program.values()) >= 8, per_program
