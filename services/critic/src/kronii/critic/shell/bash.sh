# kronii critic: the bash hooks (bash >= 5.0). Install with: eval "$(kronii shell-init bash)"
#
# Cost per prompt: no process is started. Everything below the install function runs as builtins:
# parameter expansion, printf, read, history, and redirections into a private 0700 directory.
#
# How a command is seen, and why not a DEBUG trap (bash-preexec's way): a DEBUG trap replaces any
# DEBUG trap the person has, fires for every simple command (the ones in PROMPT_COMMAND too) and
# needs care with `set -T`; bash-preexec also runs `$(history 1 | sed ...)` per command, a fork
# and an exec. Here instead:
#   - PS0 (expanded after a line is read, before it runs, never for an empty line) holds an array
#     subscript whose arithmetic stores the start time ($EPOCHREALTIME) in _kronii_t0 and expands
#     to nothing: a side effect of expansion, no command substitution.
#   - A function first in PROMPT_COMMAND takes $? and, when _kronii_t0 says a command ran, the
#     command text from `history 1` (written to the scratch file hist-<session> in the private
#     directory and read back with `read`: a builtin cannot hand its output to a variable otherwise
#     before bash 5.3). The text is blanked in that file as soon as it is read (overwritten in place
#     with spaces), so no command stays there in clear text; the file is 0600 and goes when the
#     shell exits (an EXIT trap, run before any EXIT trap the person had), and the critic removes
#     the files of shells that are gone without it (kill -9).
# Like bash-preexec, the text comes from history, so HISTCONTROL matters. `ignorespace` (and the
# space half of `ignoreboth`) is taken out of HISTCONTROL and done here instead: a line starting
# with a space still enters history for a moment, then this hook deletes it (`history -d`) and does
# not record it. Without that a private command and a repeated one (under ignoredups) would look the
# same. An unchanged history entry counts as a repeat only when ignoredups/erasedups explain it and
# HISTIGNORE is empty; a command kept out of history otherwise (HISTIGNORE, `set +o history`) is
# not recorded.
#
# What is written: one line appended to the file `spool` there with `>>` (one write, under 4000 bytes: commands
# and directories are capped, and marked as cut), in the format of kronii.critic.core.spool_line.
# Nobody needs to be reading it: when the critic is down the lines wait there.
#
# Hints: the critic writes one line per hint into this shell's FIFO hint-<session>, which it keeps
# open read-write, so its writes never block and stay in the pipe. At each prompt this hook opens
# the FIFO read-write (that never blocks on Linux) and reads a line with a timeout: up to 20 ms after
# a failing command when the critic is running (its pid file names a live process), not at all
# otherwise (`read -t 0` only asks whether a line is there).

_kronii_critic_install() {
    if ((BASH_VERSINFO[0] < 5)); then
        printf 'kronii: the critic needs bash 5.0 or newer (this is %s); no hook installed\n' \
            "$BASH_VERSION" >&2
        return 0
    fi
    if ! shopt -q promptvars; then
        printf 'kronii: the critic needs the promptvars option (shopt -s promptvars); no hook installed\n' >&2
        return 0
    fi
    _kronii_dir=@KRONII_DIR@
    [[ -d $_kronii_dir ]] || command mkdir -p -m 700 -- "$_kronii_dir" 2>/dev/null || return 0
    if [[ -z ${_kronii_session-} ]]; then
        local stat fields
        if { IFS= read -r stat </proc/$$/stat; } 2>/dev/null; then
            read -r -a fields <<<"${stat##*) }"
            _kronii_session=$$-${fields[19]}
        else
            _kronii_session=$$-$RANDOM$RANDOM
        fi
    fi
    # `kronii run -- CMD` in this shell reports to this shell's session (its hint comes here).
    export KRONII_CRITIC_SESSION=$_kronii_session
    _kronii_tty=$(command tty 2>/dev/null) || _kronii_tty=
    [[ -p $_kronii_dir/hint-$_kronii_session ]] ||
        command mkfifo -m 600 -- "$_kronii_dir/hint-$_kronii_session" 2>/dev/null
    _kronii_private_file "$_kronii_dir/hist-$_kronii_session"
    [[ -e $_kronii_dir/spool ]] || _kronii_private_file "$_kronii_dir/spool"
    local previous
    previous=$(trap -p EXIT)
    if [[ $previous != *_kronii_exit* ]]; then
        local -a words=()
        [[ -n $previous ]] && eval "words=($previous)" # trap -- 'handler' EXIT
        trap "_kronii_exit${words[2]:+; ${words[2]}}" EXIT
    fi
    declare -ga _kronii_void=()
    _kronii_dp='[.,]'
    _kronii_bs='\'
    _kronii_t0=
    : "${_kronii_private:=0}"
    local control=:${HISTCONTROL-}:
    if [[ $control == *:ignorespace:* || $control == *:ignoreboth:* ]]; then
        _kronii_private=1
        control=${control//:ignorespace:/:}
        control=${control//:ignoreboth:/:ignoredups:}
        control=${control#:}
        HISTCONTROL=${control%:}
    fi
    local stamp='${_kronii_void[_kronii_t0=${EPOCHREALTIME/$_kronii_dp/}]-}'
    [[ ${PS0-} == *"$stamp"* ]] || PS0=${PS0-}$stamp
    if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
        [[ " ${PROMPT_COMMAND[*]} " == *" _kronii_precmd "* ]] ||
            PROMPT_COMMAND=(_kronii_precmd "${PROMPT_COMMAND[@]}")
    elif [[ ${PROMPT_COMMAND-} != *_kronii_precmd* ]]; then
        PROMPT_COMMAND=_kronii_precmd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}
    fi
}

# An empty file only this user can read (a subshell for the umask: at install, or when it went).
_kronii_private_file() {
    (umask 077 && : >>"$1") 2>/dev/null
}

# At the shell's exit: its scratch file and hint FIFO go; the exit status is kept for the next trap.
_kronii_exit() {
    local status=$?
    command rm -f -- "$_kronii_dir/hist-$_kronii_session" "$_kronii_dir/hint-$_kronii_session" 2>/dev/null
    return "$status"
}

# The newest history entry, "  N* text" as `history 1` prints it, into _kronii_entry. The file is
# rewritten in place (1<>, no O_TRUNC: truncating costs milliseconds on a disk filesystem) with a NUL
# after the entry, where `read -d ''` stops; then the entry is overwritten with spaces in place (up
# to 4 bytes a character: UTF-8), so its text is on no disk once read.
_kronii_history_entry() {
    _kronii_entry=
    [[ -o history ]] || return 1
    local file=$_kronii_dir/hist-$_kronii_session
    [[ -f $file ]] || _kronii_private_file "$file"
    { { HISTTIMEFORMAT= builtin history 1 && printf '\0'; } 1<>"$file"; } 2>/dev/null || return 1
    { IFS= read -r -d '' _kronii_entry <"$file"; } 2>/dev/null
    { printf '%*s' $((${#_kronii_entry} * 4 + 1)) '' 1<>"$file"; } 2>/dev/null
    [[ -n $_kronii_entry ]]
}

# _kronii_e := $1 escaped for a spool field and cut to $2 characters; _kronii_cut := 1 when cut.
_kronii_escape() {
    local text=$1 bs=$_kronii_bs
    text=${text//"$bs"/"$bs$bs"}
    text=${text//$'\t'/"${bs}t"}
    text=${text//$'\n'/"${bs}n"}
    text=${text//$'\r'/"${bs}r"}
    _kronii_cut=0
    if ((${#text} > $2)); then
        text=${text:0:$2}
        local run=${text##*[!"$bs"]}
        ((${#run} % 2)) && text=${text:0:-1}
        _kronii_cut=1
    fi
    _kronii_e=$text
}

_kronii_record() {
    local status=$1 t0=$2 now=${EPOCHREALTIME/$_kronii_dp/} previous=${_kronii_last-}
    _kronii_history_entry || return 0
    if [[ $_kronii_entry == "$previous" ]]; then
        [[ :$HISTCONTROL: == *:ignoredups:* || :$HISTCONTROL: == *:erasedups:* ]] || return 0
        [[ -z ${HISTIGNORE-} ]] || return 0
    fi
    _kronii_last=$_kronii_entry
    local text=${_kronii_entry%$'\n'} number
    text=${text#"${text%%[![:space:]]*}"}
    number=${text%%[!0-9]*}
    text=${text:${#number}+2}
    if [[ $_kronii_private == 1 && $text == ' '* ]]; then
        builtin history -d "$number" 2>/dev/null
        _kronii_history_entry && _kronii_last=$_kronii_entry
        return 0
    fi
    local flags= cwd
    _kronii_escape "$PWD" @KRONII_MAX_CWD@
    cwd=$_kronii_e
    ((_kronii_cut)) && flags=w
    _kronii_escape "$text" @KRONII_MAX_COMMAND@
    ((_kronii_cut)) && flags=t$flags
    { printf 'k1\tbash\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$_kronii_session" "$_kronii_tty" "$cwd" \
        "$status" $(((now - t0) / 1000)) $((t0 / 1000)) "$flags" "$_kronii_e" >>"$_kronii_dir/spool"; } 2>/dev/null
    return 0
}

# Prints the critic's hint for this shell, if one is waiting (see the top of this file).
_kronii_hint() {
    local fifo=$_kronii_dir/hint-$_kronii_session line pid=
    [[ -p $fifo ]] || return 0
    if [[ -n $2 && $1 != 0 ]] && { read -r pid <"$_kronii_dir/critic.pid"; } 2>/dev/null &&
        [[ -n $pid && -d /proc/$pid ]]; then
        read -r -t 0.02 line <>"$fifo" 2>/dev/null || return 0
    else
        read -t 0 <>"$fifo" 2>/dev/null || return 0
        read -r -t 0.02 line <>"$fifo" 2>/dev/null || return 0
    fi
    printf '\e[2mkronii: %s\e[0m\n' "$line" >&2
}

_kronii_precmd() {
    local status=$? t0=${_kronii_t0-}
    _kronii_t0=
    if [[ -z ${_kronii_primed-} ]]; then
        # The first prompt: history is loaded from HISTFILE by now (not yet while the rc file runs).
        _kronii_primed=1
        _kronii_history_entry && _kronii_last=$_kronii_entry
    fi
    [[ -n $t0 ]] && _kronii_record "$status" "$t0"
    _kronii_hint "$status" "$t0"
    return "$status"
}

_kronii_critic_install
