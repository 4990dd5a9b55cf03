from kronii.runtime.launch import launch
from kronii.supervisor.service import SERVICE

launch(SERVICE)
