from kronii.common.launch import launch
from kronii.supervisor.service import SERVICE

launch(SERVICE)
