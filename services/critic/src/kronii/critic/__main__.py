"""`python -m kronii.critic`: run the console critic alone (`kronii up` runs it with the others)."""

from kronii.critic.service import SERVICE
from kronii.runtime.launch import launch

launch(SERVICE)
