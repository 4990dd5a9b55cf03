"""kronii.desktop: the person's desktop as the services share it: who holds it, the input actions on it, its prompt windows, notifications."""
