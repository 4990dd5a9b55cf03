"""`python -m kronii.critic`: run the console critic alone (`kronii up` runs it with the others)."""

from kronii.common.launch import launch
from kronii.critic.service import SERVICE

launch(SERVICE)
