/* kronii focus: the focused window on the session bus, because GNOME lets no other program read it.
 *
 * Owns org.kronii.Shell1 and exports /org/kronii/Shell1 (interface org.kronii.Shell1):
 *   GetFocus() -> (s app_id, s wm_class, s title, u pid, t window_id)
 *   signal FocusChanged (same fields), on a change of the focused window and of its title.
 * Nothing else: no window list, no input. GNOME 45 and later (ES modules); the same code as the
 * GNOME 43/44 form (gnome_extension/kronii-focus@kronii.dev), in the module form those shells require.
 */
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Shell from 'gi://Shell';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

const BUS_NAME = 'org.kronii.Shell1';
const OBJECT_PATH = '/org/kronii/Shell1';
const FIELDS = '(sssut)';
const ARGS = `
      <arg type="s" name="app_id" direction="out"/>
      <arg type="s" name="wm_class" direction="out"/>
      <arg type="s" name="title" direction="out"/>
      <arg type="u" name="pid" direction="out"/>
      <arg type="t" name="window_id" direction="out"/>`;
const INTERFACE = `<node>
  <interface name="org.kronii.Shell1">
    <method name="GetFocus">${ARGS}
    </method>
    <signal name="FocusChanged">${ARGS.replace(/ direction="out"/g, '')}
    </signal>
  </interface>
</node>`;

/* The app's id as the shell knows it (its desktop file's name, without .desktop), else the window's
 * app id (wm_class is the xdg_toplevel app id on Wayland). */
function appIdOf(window) {
    const app = Shell.WindowTracker.get_default().get_window_app(window);
    const id = app ? app.get_id() : '';
    if (id && !id.startsWith('window:'))
        return id.replace(/\.desktop$/, '');
    return window.get_wm_class() || '';
}

function fieldsOf(window) {
    if (!window)
        return ['', '', '', 0, 0];
    return [
        appIdOf(window),
        window.get_wm_class() || '',
        window.get_title() || '',
        Math.max(window.get_pid(), 0),
        window.get_id(),
    ];
}

export default class KroniiFocusExtension extends Extension {
    enable() {
        this._exported = Gio.DBusExportedObject.wrapJSObject(INTERFACE, this);
        this._exported.export(Gio.DBus.session, OBJECT_PATH);
        this._nameId = Gio.bus_own_name_on_connection(
            Gio.DBus.session, BUS_NAME, Gio.BusNameOwnerFlags.NONE, null, null);
        this._window = null;
        this._titleId = 0;
        this._focusId = global.display.connect('notify::focus-window', () => this._follow());
        this._follow();
    }

    disable() {
        global.display.disconnect(this._focusId);
        this._unwatchTitle();
        Gio.bus_unown_name(this._nameId);
        this._exported.unexport();
        this._exported = null;
    }

    GetFocus() {
        return fieldsOf(global.display.focus_window);
    }

    _follow() {
        this._unwatchTitle();
        const window = global.display.focus_window;
        if (window) {
            this._window = window;
            this._titleId = window.connect('notify::title', () => this._emit());
        }
        this._emit();
    }

    _unwatchTitle() {
        if (this._window && this._titleId)
            this._window.disconnect(this._titleId);
        this._window = null;
        this._titleId = 0;
    }

    _emit() {
        const fields = new GLib.Variant(FIELDS, fieldsOf(global.display.focus_window));
        this._exported.emit_signal('FocusChanged', fields);
    }
}
