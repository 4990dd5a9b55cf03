"""kronii console: the person's local web page (`python -m kronii.console`)."""

from kronii.console.service import SERVICE
from kronii.runtime.launch import launch

launch(SERVICE)
