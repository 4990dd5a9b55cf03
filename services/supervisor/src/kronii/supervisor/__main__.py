from kronii.common.spec import launch
from kronii.supervisor.service import SERVICE

launch(SERVICE)
