"""The TTY binding's cross-check and the read-only window's key (core.presence): every way a claim
can disagree with what /proc says is refused with its own sentence."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.capture.core.presence import ProcFacts, TtyClaim, decode_tty_nr, tty_refusal, window_key

PTS3 = (136, 3)
ON_PTS3 = ProcFacts(
    pid=4242, uid=1000, session=4000, tty=PTS3, start_ticks=777, stdin=PTS3, leader_start_ticks=700
)
CLAIM = TtyClaim(name="/dev/pts/3", device=PTS3, session=4000)


@pytest.mark.parametrize(
    ("tty_nr", "device"),
    [
        (0, None),
        (136 << 8 | 3, (136, 3)),  # /dev/pts/3
        (4 << 8 | 1, (4, 1)),  # /dev/tty1
        # /dev/pts/300: the minor's high bits sit above the major (the kernel's new_encode_dev).
        ((300 & 0xFF) | 136 << 8 | (300 & ~0xFF) << 12, (136, 300)),
    ],
)
def test_tty_nr_decodes_to_the_major_and_minor_of_the_controlling_terminal(
    tty_nr: int, device: tuple[int, int] | None
) -> None:
    assert decode_tty_nr(tty_nr) == device


def test_a_claim_that_matches_the_kernel_passes() -> None:
    assert tty_refusal(CLAIM, ON_PTS3) is None


@pytest.mark.parametrize(
    ("claim", "facts", "sentence"),
    [
        (None, ON_PTS3, "needs a person at a terminal"),
        (replace(CLAIM, name=""), ON_PTS3, "needs a person at a terminal"),
        (CLAIM, replace(ON_PTS3, tty=None), "has no controlling terminal"),
        (replace(CLAIM, device=None), ON_PTS3, "is not a terminal device"),
        (replace(CLAIM, device=(136, 4)), ON_PTS3, "not the calling process's own terminal"),
        (replace(CLAIM, session=4001), ON_PTS3, "not the calling process's own session"),
        (replace(CLAIM, session=None), ON_PTS3, "not the calling process's own session"),
        (CLAIM, replace(ON_PTS3, stdin=(1, 3)), "standard input is not its terminal"),
        (CLAIM, replace(ON_PTS3, stdin=None), "standard input is not its terminal"),
    ],
)
def test_a_claim_that_disagrees_with_the_kernel_is_refused_with_a_sentence(
    claim: TtyClaim | None, facts: ProcFacts, sentence: str
) -> None:
    refusal = tty_refusal(claim, facts)
    assert refusal is not None and sentence in refusal
    assert "/" not in refusal  # a sentence, no path


def test_processes_on_one_terminal_session_share_a_window_and_a_new_session_does_not() -> None:
    sibling = replace(ON_PTS3, pid=4243, start_ticks=790, stdin=None)
    assert window_key(sibling) == window_key(ON_PTS3)
    assert window_key(replace(ON_PTS3, session=4100)) != window_key(ON_PTS3)
    # The same session id reused by a later session leader is another session.
    assert window_key(replace(ON_PTS3, leader_start_ticks=900)) != window_key(ON_PTS3)
    assert window_key(replace(ON_PTS3, tty=(136, 4))) != window_key(ON_PTS3)


def test_without_a_terminal_the_window_belongs_to_the_process_alone() -> None:
    headless = replace(ON_PTS3, tty=None)
    assert window_key(headless) != window_key(replace(headless, pid=4243))
    assert window_key(headless) != window_key(replace(headless, start_ticks=778))
    assert window_key(replace(ON_PTS3, leader_start_ticks=None)).startswith("pid:")
