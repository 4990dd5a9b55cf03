"""Finding what a failing command printed in a captured pane: the lines after the prompt line that
holds it (the last such line), without the shell's next prompt, never another command's text, cut to
the last few KB."""

from __future__ import annotations

from kronii.critic.core.pane_text import MAX_ERROR_TEXT_BYTES, text_after_command

NOT_FOUND = "ls: cannot access '/nonexistent-x': No such file or directory"


def screen(text: str) -> list[str]:
    # capture-pane prints the whole screen: the rows under the cursor are empty (zsh pads with spaces).
    return [*text.split("\n"), "", "   ", ""]


def test_the_lines_after_the_prompt_line_up_to_the_end_are_the_error_text() -> None:
    captured = screen(
        f"bash-5.2$ make\nmake: nothing to do\nbash-5.2$ ls /nonexistent-x\n{NOT_FOUND}\nsecond line"
    )

    assert text_after_command(captured, "ls /nonexistent-x") == f"{NOT_FOUND}\nsecond line"


def test_the_last_run_of_the_same_command_is_the_one_reported() -> None:
    captured = screen(f"$ ls /nonexistent-x\nold error\n$ ls /nonexistent-x\n{NOT_FOUND}")

    assert text_after_command(captured, "ls /nonexistent-x") == NOT_FOUND


def test_a_command_that_printed_nothing_has_no_error_text_even_after_an_earlier_run() -> None:
    captured = screen("$ false\n$ false")

    assert text_after_command(captured, "false") == ""


def test_a_shell_report_naming_the_command_is_error_text_not_the_prompt_line() -> None:
    zsh = screen("vm# ls\nfile\nvm# foo\nzsh: command not found: foo")
    fish = screen("root@vm /src# foo\nfish: Unknown command: foo")

    assert text_after_command(zsh, "foo") == "zsh: command not found: foo"
    assert text_after_command(fish, "foo") == "fish: Unknown command: foo"


def test_the_next_prompt_drawn_before_the_capture_is_left_out() -> None:
    same = screen(f"vm# ls /nonexistent-x\n{NOT_FOUND}\nvm#")
    # fish shows the last status in its prompt: the next one differs from the command's.
    with_status = screen(f"root@vm /src [1]# ls /nonexistent-x\n{NOT_FOUND}\nroot@vm /src [2]#")

    assert text_after_command(same, "ls /nonexistent-x") == NOT_FOUND
    assert text_after_command(with_status, "ls /nonexistent-x") == NOT_FOUND


def test_an_error_line_that_only_ends_like_the_prompt_is_kept() -> None:
    captured = screen("$ ./build\nerror: see the log at build.log #\nmore:\n  compile failed #")

    assert (
        text_after_command(captured, "./build")
        == "error: see the log at build.log #\nmore:\n  compile failed #"
    )


def test_the_continuation_lines_of_a_command_of_several_lines_are_not_error_text() -> None:
    captured = screen("$ for f in a b; do\n> cat $f\n> done\ncat: a: No such file or directory")

    assert (
        text_after_command(captured, "for f in a b; do\ncat $f\ndone") == "cat: a: No such file or directory"
    )


def test_a_command_not_on_the_screen_has_no_error_text() -> None:
    captured = screen(f"$ something else\n{NOT_FOUND}")

    assert text_after_command(captured, "ls /nonexistent-x") == ""
    assert text_after_command(captured, "   ") == ""


def test_a_long_error_text_keeps_its_last_bytes_without_a_broken_character() -> None:
    output = [f"line {index} é" for index in range(2000)]
    captured = screen("\n".join(["$ ./noisy", *output]))

    text = text_after_command(captured, "./noisy")

    assert len(text.encode("utf-8")) <= MAX_ERROR_TEXT_BYTES
    assert len(text.encode("utf-8")) > MAX_ERROR_TEXT_BYTES - 4
    assert text.endswith("line 1999 é")
    assert "\ufffd" not in text
    # Five bytes of "ééé" (six) start inside the first "é": it goes, the two whole ones stay.
    assert text_after_command(["$ ./noisy", "ééé"], "./noisy", limit_bytes=5) == "éé"
