from kronii.common.spec import launch
from kronii.sensor.service import SERVICE

launch(SERVICE)
