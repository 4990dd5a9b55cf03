"""The TTY binding's cross-check, the window's key and the refusals' wording (kronii.edge.presence_rules):
every way a claim can disagree with what /proc says is refused with its own sentence, in the words of
the service's purpose."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.edge.peers import ProcFacts, decode_tty_nr
from kronii.edge.presence_rules import PresencePurpose, TtyClaim, polkit_refusal, tty_refusal, window_key

PTS3 = (136, 3)
ON_PTS3 = ProcFacts(
    pid=4242, uid=1000, session=4000, tty=PTS3, start_ticks=777, stdin=PTS3, leader_start_ticks=700
)
CLAIM = TtyClaim(name="/dev/pts/3", device=PTS3, session=4000)
SIGN_IN = PresencePurpose(
    service="broker",
    polkit_action="org.kronii.test-sign-in",
    doing="signing an agent in",
    to_do="sign agents in",
    command="kronii broker",
    grants=("SIGN_IN",),
)


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
    assert tty_refusal(CLAIM, ON_PTS3, SIGN_IN) is None


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
    refusal = tty_refusal(claim, facts, SIGN_IN)
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


def test_the_refusals_and_the_names_are_in_the_words_of_the_services_purpose() -> None:
    assert tty_refusal(None, ON_PTS3, SIGN_IN) == (
        "signing an agent in needs a person at a terminal: run kronii broker from an interactive "
        "terminal (its standard input is not a terminal)"
    )
    assert polkit_refusal(SIGN_IN, challenge=False) == "polkit does not allow this user to sign agents in"
    assert polkit_refusal(SIGN_IN, challenge=True).startswith(
        "polkit did not authorize signing an agent in: nobody confirmed with their password"
    )
    assert SIGN_IN.audit_action == "broker.presence"
    assert SIGN_IN.window_prefix == "kronii:broker:presence:"
