from kronii.capture.service import SERVICE
from kronii.common.launch import launch

launch(SERVICE)
