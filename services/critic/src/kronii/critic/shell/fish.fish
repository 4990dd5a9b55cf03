# kronii critic: the fish hooks (fish >= 3.5). Install with: kronii shell-init fish | source
#
# Cost per prompt: no process is started; fish runs its builtins (string, path, read, echo) and
# command substitutions of builtins in its own process.
#
# The fish_postexec event carries all a record needs: the line as typed, $status and
# $CMD_DURATION, so there is no fish_preexec handler. Lines that are blank, or that fish keeps out
# of history (a leading space, private mode), are not recorded. fish has no wall clock builtin: the
# hook truncates its own scratch file clock-<session> and takes its mtime (`path mtime`, whole
# seconds) as the second the command ended in ("~S" in the line); the critic, reading the line at
# once, knows the exact time, and from a line that waited it takes that second.
#
# What is written: one line appended to the file `spool` in the private directory with `>>` (one
# write by `echo`, under 4000 bytes: commands and directories are capped, and marked as cut), in the
# format of kronii.critic.core.spool_line. When the critic is down the lines wait there.
#
# Hints: fish's `read` has no timeout, so it cannot read a FIFO that may be empty without the risk of
# blocking. The critic writes fish's hints into a plain file, hint-<session>; at each prompt this hook
# reads it when it is not empty and truncates it. The prompt never waits: a hint the critic writes
# after the prompt was drawn shows at the next one.
#
# Files: clock-<session> (always empty) and hint-<session> are 0600 and removed when the shell exits
# (a fish_exit handler), and by the critic for a shell that is gone without it. The command's text
# is only ever in the spool line, which the critic reads and removes at once.

function _kronii_critic_install
    set -g _kronii_dir @KRONII_DIR@
    if not test -d $_kronii_dir
        command mkdir -p -m 700 -- $_kronii_dir 2>/dev/null; or return 0
    end
    if not set -q _kronii_session
        set -l stat
        if read -l stat </proc/$fish_pid/stat 2>/dev/null
            set -l fields (string split ' ' -- (string replace -r '^.*\) ' '' -- $stat))
            set -g _kronii_session $fish_pid-$fields[20]
        else
            set -g _kronii_session $fish_pid-(random)(random)
        end
    end
    # `kronii run -- CMD` in this shell reports to this shell's session (its hint comes here).
    set -gx KRONII_CRITIC_SESSION $_kronii_session
    set -g _kronii_tty (command tty 2>/dev/null)
    string match -q '/*' -- "$_kronii_tty"; or set -g _kronii_tty ''
    for file in $_kronii_dir/clock-$_kronii_session $_kronii_dir/spool
        test -e $file; or command install -m 600 /dev/null $file 2>/dev/null
    end
end

function _kronii_exit --on-event fish_exit
    command rm -f -- $_kronii_dir/clock-$_kronii_session $_kronii_dir/hint-$_kronii_session 2>/dev/null
end

# _kronii_e := $argv[1] escaped for a spool field, cut to $argv[2] characters; _kronii_cut := 1 when
# cut. Each command substitution costs fish a pipe and a thread hand-off, so the usual text (no
# backslash, tab or newline, short enough) takes none.
function _kronii_escape
    set -g _kronii_e $argv[1]
    set -g _kronii_cut 0
    if string match -qr '[\\\\\t\n\r]' -- $argv[1]
        set -l lines (string split \n -- $argv[1])
        set lines (string replace -a \\ \\\\ -- $lines)
        set lines (string replace -a \t \\t -- $lines)
        set lines (string replace -a \r \\r -- $lines)
        set _kronii_e (string join \\n -- $lines)
    end
    string match -qr "^[\s\S]{$argv[2]}." -- $_kronii_e; or return 0
    set _kronii_e (string sub -l $argv[2] -- $_kronii_e)
    set -l run (string match -r '\\\\*$' -- $_kronii_e)
    test (math (string length -- "$run") % 2) -eq 1; and set _kronii_e (string sub -e -1 -- $_kronii_e)
    set _kronii_cut 1
end

function _kronii_postexec --on-event fish_postexec
    set -l exit_status $status
    set -l duration $CMD_DURATION
    set -l text $argv[1]
    string match -qr '\S' -- $text; or return 0
    string match -q ' *' -- $text; and return 0
    set -q fish_private_mode; and return 0
    test -d $_kronii_dir; or return 0
    set -l clock $_kronii_dir/clock-$_kronii_session
    echo -n >$clock
    set -l ended (path mtime -- $clock)
    set -l flags ''
    _kronii_escape $PWD @KRONII_MAX_CWD@
    set -l cwd $_kronii_e
    test $_kronii_cut = 1; and set flags w
    _kronii_escape $text @KRONII_MAX_COMMAND@
    test $_kronii_cut = 1; and set flags t$flags
    echo "k1"\t"fish"\t"$_kronii_session"\t"$_kronii_tty"\t"$cwd"\t"$exit_status"\t"$duration"\t"~$ended"\t"$flags"\t"$_kronii_e" >>$_kronii_dir/spool
end

function _kronii_hint --on-event fish_prompt
    set -l file $_kronii_dir/hint-$_kronii_session
    test -s $file; or return 0
    set -l lines
    while read -l line
        set -a lines $line
    end <$file
    echo -n >$file
    for line in $lines
        printf '\e[2mkronii: %s\e[0m\n' $line >&2
    end
end

_kronii_critic_install
