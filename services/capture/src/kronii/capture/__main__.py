from kronii.capture.service import SERVICE
from kronii.common.spec import launch

launch(SERVICE)
