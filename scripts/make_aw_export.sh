#!/usr/bin/env bash
# Make a real ActivityWatch export for kronii's import test (tests/data/activity/aw_export.json) and
# ActivityWatch's own per-app report of it (tests/data/activity/aw_report.json).
#
# What runs: aw-server (PyPI), aw-watcher-window and aw-watcher-afk (their ActivityWatch sources:
# the watchers are not published on PyPI) in a throwaway venv outside the repository, on a private
# Xvfb display with openbox, while xdotool switches the focus between two real windows (an xterm
# and an xmessage) and types into them, with a quiet stretch the AFK watcher reports as afk. Then
# the export is aw-server's own (GET /api/0/export) and the report is aw-server's query API
# (POST /api/0/query/) run with the canonical per-app queries: every window event merged by app,
# and the same filtered to the not-afk periods (what aw-webui shows with "filter AFK").
#
# Usage: scripts/make_aw_export.sh [OUT_DIR]      (default: tests/data/activity)
# Environment:
#   AW_VENV      a venv that has aw-server (with flask<2.3 and peewee<3.18, see below),
#                aw-watcher-window and aw-watcher-afk installed; when
#                unset one is made under $TMPDIR (needs the watchers' sources: AW_WATCHER_SRC)
#   AW_WATCHER_SRC  a folder holding clones of aw-watcher-window and aw-watcher-afk
#   AW_ROUNDS    how many focus-switch rounds to record (default 8, about 20 s each)
# Needs: Xvfb, openbox, xterm, xmessage, xdotool, curl, python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$here/tests/data/activity}"
rounds="${AW_ROUNDS:-8}"
work="$(mktemp -d "${TMPDIR:-/tmp}/kronii-aw.XXXXXX")"
pids=()

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

venv="${AW_VENV:-}"
if [[ -z "$venv" ]]; then
    venv="$work/venv"
    python3 -m venv "$venv"
    # aw-server 0.12.0 (its last release on PyPI) needs the Flask and peewee of its day: Flask 2.3
    # dropped app.json_encoder (every query answers 500), peewee 4 hands back datetimes where its
    # datastore parses text (every bucket answers 500).
    "$venv/bin/pip" install -q aw-server aw-client "flask<2.3" "peewee<3.18"
    src="${AW_WATCHER_SRC:?set AW_WATCHER_SRC to a folder with aw-watcher-window and aw-watcher-afk clones}"
    "$venv/bin/pip" install -q "$src/aw-watcher-window" "$src/aw-watcher-afk"
fi

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
api="http://127.0.0.1:$port/api/0"
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
mkdir -p "$XDG_CONFIG_HOME/activitywatch/aw-client" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
cat >"$XDG_CONFIG_HOME/activitywatch/aw-client/aw-client.toml" <<EOF
[server]
hostname = "127.0.0.1"
port = "$port"
EOF

# A private display with a window manager that sets _NET_ACTIVE_WINDOW (what the window watcher reads).
display_number=$((90 + RANDOM % 400))
Xvfb ":$display_number" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY=":$display_number"
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done
openbox >"$work/openbox.log" 2>&1 &
pids+=($!)
sleep 1

"$venv/bin/aw-server" --port "$port" >"$work/aw-server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "$api/info" >/dev/null && break; sleep 0.2; done
curl -sf "$api/info" >/dev/null

xterm -T "notes - kronii test" -geometry 80x24+10+10 -e sh -c 'cat >/dev/null' &
pids+=($!)
xmessage -geometry 300x100+600+300 -title "release checklist" "release checklist" &
pids+=($!)
sleep 1
term="$(xdotool search --sync --class XTerm | head -1)"
message="$(xdotool search --sync --class Xmessage | head -1)"

"$venv/bin/aw-watcher-window" --port "$port" --poll-time 1 >"$work/window.log" 2>&1 &
window_watcher=$!
pids+=($window_watcher)
"$venv/bin/aw-watcher-afk" --port "$port" --timeout 20 --poll-time 2 >"$work/afk.log" 2>&1 &
afk_watcher=$!
pids+=($afk_watcher)
sleep 3

busy() {  # keep typing into the focused window for $1 seconds
    local until=$((SECONDS + $1))
    while ((SECONDS < until)); do
        xdotool type --delay 80 "kronii " >/dev/null 2>&1 || true
        xdotool mousemove_relative -- 3 0 >/dev/null 2>&1 || true
        sleep 0.5
    done
}

for round in $(seq "$rounds"); do
    xdotool windowactivate --sync "$term"
    busy 12
    xdotool windowactivate --sync "$message"
    busy 8
    if ((round == rounds / 2)); then
        sleep 35 # quiet: the AFK watcher sees no input past its 20 s timeout
    fi
done
xdotool windowactivate --sync "$term"
busy 5

# Stop the watchers as a person would (SIGINT), then give the server their last heartbeats.
kill -INT "$window_watcher" "$afk_watcher" 2>/dev/null || true
sleep 3

mkdir -p "$out"
curl -sf "$api/export" | python3 -m json.tool --indent 1 >"$out/aw_export.json"
python3 - "$api" "$out" <<'PY'
import json
import sys
import urllib.request

api, out = sys.argv[1], sys.argv[2]
with open(f"{out}/aw_export.json") as handle:
    buckets = json.load(handle)["buckets"]
window = next(name for name in buckets if name.startswith("aw-watcher-window_"))
afk = next(name for name in buckets if name.startswith("aw-watcher-afk_"))
starts, ends = [], []
for bucket in buckets.values():
    for event in bucket["events"]:
        starts.append(event["timestamp"])
period = f"{min(starts)[:19]}+00:00/2100-01-01T00:00:00+00:00"


def query(lines: list[str]) -> list[dict]:
    body = json.dumps({"timeperiods": [period], "query": lines}).encode()
    request = urllib.request.Request(f"{api}/query/", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)[0]


per_app = query(
    [
        f'window_events = query_bucket("{window}");',
        'merged = merge_events_by_keys(window_events, ["app"]);',
        "RETURN = sort_by_duration(merged);",
    ]
)
per_app_not_afk = query(
    [
        f'afk_events = query_bucket("{afk}");',
        f'window_events = query_bucket("{window}");',
        'window_events = filter_period_intersect(window_events, filter_keyvals(afk_events, "status", ["not-afk"]));',
        'merged = merge_events_by_keys(window_events, ["app"]);',
        "RETURN = sort_by_duration(merged);",
    ]
)
report = {
    "made_by": "scripts/make_aw_export.sh: aw-server's query API (/api/0/query/) over its own buckets",
    "period": period,
    "seconds_per_app": {event["data"]["app"]: round(event["duration"], 3) for event in per_app},
    "seconds_per_app_not_afk": {event["data"]["app"]: round(event["duration"], 3) for event in per_app_not_afk},
}
with open(f"{out}/aw_report.json", "w") as handle:
    json.dump(report, handle, indent=1)
    handle.write("\n")
print(json.dumps(report, indent=1))
PY
