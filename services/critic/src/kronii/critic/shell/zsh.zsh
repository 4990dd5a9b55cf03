# kronii critic: the zsh hooks (zsh >= 5.0). Install with: eval "$(kronii shell-init zsh)"
#
# Cost per prompt: no process is started. The hooks are add-zsh-hook's preexec (the line as typed
# and the start time, from zsh/datetime's $epochtime) and a precmd put first in precmd_functions so
# that it sees the command's own $?. A line starting with a space is not recorded when
# HIST_IGNORE_SPACE keeps it out of history; an empty line runs no preexec and records nothing.
#
# What is written: one line appended to the file `spool` in the private directory with `>>` (one
# write, under 4000 bytes: commands and directories are capped, and marked as cut), in the format of
# kronii.critic.core.spool_line. Nobody needs to be reading it: when the critic is down the lines
# wait there.
#
# Hints: the critic writes one line per hint into this shell's FIFO hint-<session>, which it keeps
# open read-write, so its writes never block and stay in the pipe. At each prompt the precmd opens
# the FIFO read-write (that never blocks on Linux) and reads a line with a timeout: up to 20 ms after
# a failing command when the critic is running (its pid file names a live process), else `read -t 0`
# (take a line only if one is there).
#
# Files: the FIFO hint-<session> (0600; it holds nothing on disk) is removed when the shell exits
# (a zshexit hook), and by the critic for a shell that is gone without it. The command's text is
# only ever in the spool line, which the critic reads and removes at once.

_kronii_critic_install() {
    emulate -L zsh
    zmodload zsh/datetime 2>/dev/null || {
        print -ru2 -- 'kronii: the critic needs the zsh/datetime module; no hook installed'
        return 0
    }
    typeset -g _kronii_dir=@KRONII_DIR@
    [[ -d $_kronii_dir ]] || command mkdir -p -m 700 -- $_kronii_dir 2>/dev/null || return 0
    if [[ -z ${_kronii_session-} ]]; then
        local stat
        if { IFS= read -r stat </proc/$$/stat } 2>/dev/null; then
            local -a fields=(${=${stat##*) }})
            typeset -g _kronii_session=$$-$fields[20]
        else
            typeset -g _kronii_session=$$-$RANDOM$RANDOM
        fi
    fi
    # `kronii run -- CMD` in this shell reports to this shell's session (its hint comes here).
    export KRONII_CRITIC_SESSION=$_kronii_session
    typeset -g _kronii_tty=${TTY-}
    [[ -p $_kronii_dir/hint-$_kronii_session ]] ||
        command mkfifo -m 600 -- $_kronii_dir/hint-$_kronii_session 2>/dev/null
    [[ -e $_kronii_dir/spool ]] || (umask 077 && : >>$_kronii_dir/spool) 2>/dev/null
    typeset -g _kronii_t0= _kronii_command=
    autoload -Uz add-zsh-hook
    add-zsh-hook preexec _kronii_preexec
    add-zsh-hook zshexit _kronii_exit
    precmd_functions=(_kronii_precmd ${precmd_functions:#_kronii_precmd})
}

_kronii_exit() {
    command rm -f -- $_kronii_dir/hint-$_kronii_session 2>/dev/null
    return 0
}

_kronii_preexec() {
    typeset -g _kronii_command=${1:-$3}
    typeset -g _kronii_t0=$((epochtime[1] * 1000 + epochtime[2] / 1000000))
}

# REPLY := $1 escaped for a spool field and cut to $2 characters; _kronii_cut := 1 when cut.
_kronii_escape() {
    local text=$1 run
    text=${text//\\/\\\\}
    text=${text//$'\t'/\\t}
    text=${text//$'\n'/\\n}
    text=${text//$'\r'/\\r}
    typeset -g _kronii_cut=0
    if ((${#text} > $2)); then
        text=${text[1,$2]}
        run=${(M)text%%\\##}
        ((${#run} % 2)) && text=${text[1,-2]}
        _kronii_cut=1
    fi
    REPLY=$text
}

_kronii_record() {
    local exit_status=$1 t0=$2 text=$3 flags= cwd REPLY
    local now=$((epochtime[1] * 1000 + epochtime[2] / 1000000))
    [[ -o histignorespace && $text == ' '* ]] && return 0
    _kronii_escape $PWD @KRONII_MAX_CWD@
    cwd=$REPLY
    ((_kronii_cut)) && flags=w
    _kronii_escape $text @KRONII_MAX_COMMAND@
    ((_kronii_cut)) && flags=t$flags
    { print -r -- "k1"$'\t'"zsh"$'\t'"$_kronii_session"$'\t'"$_kronii_tty"$'\t'"$cwd"$'\t'"$exit_status"$'\t'"$((now - t0))"$'\t'"$t0"$'\t'"$flags"$'\t'"$REPLY" >>$_kronii_dir/spool } 2>/dev/null
    return 0
}

# Prints the critic's hint for this shell, if one is waiting (see the top of this file).
_kronii_hint() {
    local fifo=$_kronii_dir/hint-$_kronii_session line pid= wait=0
    [[ -p $fifo ]] || return 0
    if [[ -n $2 && $1 != 0 ]] && { read -r pid <$_kronii_dir/critic.pid } 2>/dev/null &&
        [[ -n $pid && -d /proc/$pid ]]; then
        wait=0.02
    fi
    { read -r -t $wait line <>$fifo } 2>/dev/null || return 0
    print -ru2 -- $'\e[2m'"kronii: $line"$'\e[0m'
}

_kronii_precmd() {
    local exit_status=$?
    emulate -L zsh
    local t0=$_kronii_t0 text=$_kronii_command
    _kronii_t0= _kronii_command=
    [[ -n $t0 ]] && _kronii_record $exit_status $t0 $text
    _kronii_hint $exit_status $t0
    return $exit_status
}

_kronii_critic_install
