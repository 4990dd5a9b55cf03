"""`python -m kronii.vision`: run the vision engine alone (`kronii up` runs it with the others)."""

from kronii.common.launch import launch
from kronii.vision.service import SERVICE

launch(SERVICE)
