"""`python -m kronii.vision`: run the vision engine alone (`kronii up` runs it with the others)."""

from kronii.runtime.launch import launch
from kronii.vision.service import SERVICE

launch(SERVICE)
