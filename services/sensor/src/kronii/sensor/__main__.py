from kronii.common.service import run_service
from kronii.sensor.service import SERVICE

run_service(SERVICE)
