from kronii.runtime.launch import launch
from kronii.sensor.service import SERVICE

launch(SERVICE)
