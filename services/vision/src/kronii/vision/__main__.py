"""`python -m kronii.vision`: run the vision engine alone (`kronii up` runs it with the others)."""

from kronii.common.spec import launch
from kronii.vision.service import SERVICE

launch(SERVICE)
