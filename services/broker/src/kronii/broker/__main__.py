"""`python -m kronii.broker`: run the input broker alone (`kronii up` runs it with the others)."""

from kronii.broker.service import SERVICE
from kronii.runtime.launch import launch

launch(SERVICE)
