/*
 * kronii's KWin script: KWin lets no other program read the focused window over Wayland, so kronii's
 * sensor loads this script into KWin (org.kde.KWin /Scripting loadScript, then run) and KWin calls the
 * sensor back on the session bus each time the active window or its caption changes:
 *
 *   @DEST@ /org/kronii/KWinFocus org.kronii.KWinFocus1.Focus(app, name, caption, pid, id)
 *
 * every field a string (KWin's callDBus would send a JavaScript number as a double); all empty when no
 * window is active. @DEST@ is the sensor's own unique bus name, written in when it loads the script,
 * and the sensor takes the call only from KWin's own connection. Works with KWin 5 (clientActivated,
 * activeClient) and KWin 6 (windowActivated, activeWindow).
 */
var DEST = "@DEST@";
var current = null;

function text(value) {
    return value === undefined || value === null ? "" : String(value);
}

function send(window) {
    if (!window) {
        callDBus(DEST, "/org/kronii/KWinFocus", "org.kronii.KWinFocus1", "Focus", "", "", "", "", "");
        return;
    }
    var app = text(window.desktopFileName) || text(window.resourceClass);
    callDBus(DEST, "/org/kronii/KWinFocus", "org.kronii.KWinFocus1", "Focus",
             app, text(window.resourceClass), text(window.caption), text(window.pid), text(window.internalId));
}

function captionChanged() {
    send(current);
}

function activated(window) {
    if (current && current.captionChanged) {
        try {
            current.captionChanged.disconnect(captionChanged);
        } catch (error) {
            // the window is gone: nothing to disconnect from
        }
    }
    current = window;
    if (window && window.captionChanged) {
        window.captionChanged.connect(captionChanged);
    }
    send(window);
}

(workspace.windowActivated || workspace.clientActivated).connect(activated);
activated(workspace.activeWindow !== undefined ? workspace.activeWindow : workspace.activeClient);
