from kronii.capture.service import SERVICE
from kronii.runtime.launch import launch

launch(SERVICE)
