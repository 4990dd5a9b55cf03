"""Adapters that turn the desktop (X11, D-Bus) into inputs for the sensor core."""
