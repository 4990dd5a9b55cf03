#!/usr/bin/env bash
# Installs the system packages kronii and its tests use, on Debian/Ubuntu, when run as root.
# Without root it only reports what is missing.
set -euo pipefail
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have tmux || need+=(tmux)
have Xvfb || need+=(xvfb)
have xdotool || need+=(xdotool)
have openbox || need+=(openbox)
have xprop || need+=(x11-utils)
have dbus-daemon || need+=(dbus)
have dbus-launch || need+=(dbus-x11)
have tesseract || need+=(tesseract-ocr tesseract-ocr-eng)
have xterm || need+=(xterm)
have x11vnc || need+=(x11vnc)  # the broker's remote viewing (VncServer) and its tests
have zenity || need+=(zenity)  # a GTK3 entry the broker's input tests type into
have xtightvncviewer || need+=(xtightvncviewer)  # a real VNC viewer from Debian: the person at the broker's x11vnc
have xinput || need+=(xinput)  # xinput test-xi2: the X server's own order of events, read independently of the broker
have gnome-keyring-daemon || need+=(gnome-keyring)  # a real Secret Service for the master-key tests
[ -x /usr/lib/polkit-1/polkitd ] || need+=(polkitd)  # a real polkit authority for the capture presence tests
have systemd-analyze || need+=(systemd)  # checks the user unit of `kronii service install`
have desktop-file-validate || need+=(desktop-file-utils)  # checks its autostart entry
have zsh || need+=(zsh)  # the critic's shell hooks are tested in a real zsh
have fish || need+=(fish)  # and in a real fish
[ -x /usr/bin/time ] || need+=(time)  # GNU time: bench/redaction_memory.py reads a command's peak memory
have dunst || need+=(dunst)  # a real notification daemon: the critic's warnings reach the desktop through the pipeline
{ have promtool && have prometheus; } || need+=(prometheus)  # promtool checks the rules; prometheus scrapes `kronii up` in a slow test
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
# The vision engine's AT-SPI tests: a GTK3 form run by the system python, and the accessibility buses.
/usr/bin/python3 -c "import gi" 2>/dev/null || need+=(python3-gi)
/usr/bin/python3 -c "import gi; gi.require_version('Gtk', '3.0')" 2>/dev/null || need+=(gir1.2-gtk-3.0)
[ -x /usr/libexec/at-spi-bus-launcher ] || need+=(at-spi2-core)
have dbus-update-activation-environment || need+=(dbus)  # hands DISPLAY to the private bus's services
# The vision conformance suite (tests/integration/vision/conformance): real applications of four toolkits.
have galculator || need+=(galculator)  # GTK3: a calculator with a menu bar (zenity above is the GTK3 dialogs)
have gnome-calculator || need+=(gnome-calculator)  # GTK4: buttons whose text is a label inside them
have gnome-text-editor || need+=(gnome-text-editor)  # GTK4: an editor with popover menus
have featherpad || need+=(featherpad)  # Qt5 (QT_ACCESSIBILITY=1): an editor with a menu bar and a search bar
have mousepad || need+=(mousepad)  # GTK3: an editor under a Qt window (the window in front)
have speedcrunch || need+=(speedcrunch)  # Qt5: a calculator over it
# Wayland sessions (tests/wayland.py): a headless sway (wlroots' protocols), its clients, and weston (a
# compositor that offers none of them, for the sentences that say so).
have sway || need+=(sway)
have foot || need+=(foot)
have grim || need+=(grim)  # frames through wlr-screencopy
have wtype || need+=(wtype)  # the virtual keyboard, as agents' tools use it
have weston || need+=(weston)
have cage || need+=(cage)  # a second wlroots compositor (a kiosk): screen copy and idle, no window list
have wayland-info || need+=(wayland-utils)
[ -e /usr/lib/x86_64-linux-gnu/qt5/plugins/platforms/libqwayland-generic.so ] || need+=(qtwayland5)
have gnome-shell || need+=(gnome-shell)  # GNOME 43 headless (tests/gnome.py): kronii's Shell extension, mutter's idle
have kwin_wayland || need+=(kwin-wayland)  # KDE Plasma's compositor, headless (tests/kde.py): kronii's KWin script
# GNOME's frames: mutter's screen cast sends them through PipeWire, and GStreamer's pipewiresrc reads them.
have pipewire || need+=(pipewire)
have wireplumber || need+=(wireplumber)
have gst-launch-1.0 || need+=(gstreamer1.0-tools)
[ -e /usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstpipewire.so ] || need+=(gstreamer1.0-pipewire)
[ -e /usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstvideoconvertscale.so ] || need+=(gstreamer1.0-plugins-base)  # videoconvert (GStreamer 1.22)
have chromium || need+=(chromium)  # Chromium's accessibility tree (--force-renderer-accessibility) on a local page
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ] || ! have apt-get; then
  echo "kronii: these system packages are missing: ${need[*]}" >&2
  echo "kronii: install them with your package manager (as root: apt-get install ${need[*]})" >&2
  exit 0
fi
echo "kronii: installing system packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
