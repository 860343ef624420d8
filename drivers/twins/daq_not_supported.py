"""USB-6210 twin: NI's answer to every NI-DAQmx function the twin does not simulate.

NI gRPC Device Server forwards every call to the driver, and the driver answers what the board cannot do
with an NI-DAQmx error: a channel the board does not have (ao0 on a board without analog outputs) is
-200170, a property the board or task lacks is -200452. The twin answers the same way instead of gRPC's
bare UNIMPLEMENTED, and says so where the board has the feature but the twin does not simulate it
(counters, digital lines, other measurement types): -209876, naming the function.
"""

from __future__ import annotations

from nidaqmx.error_codes import DAQmxErrors as E
from uartlab.drivers.twins.daq_channels import DaqmxError, physical_channel_missing

CHANNEL_FIELDS = ("physical_channel", "counter", "lines")   # how each Create*Chan request names its channels


def not_supported(rpc: str, request, device: str) -> DaqmxError:
    fields = request.DESCRIPTOR.fields_by_name
    for field in CHANNEL_FIELDS:
        if field in fields and (missing := physical_channel_missing(device, getattr(request, field))):
            return missing
    where = [f"Task Name: {request.task.name}"] if "task" in fields else [f"Device: {device}"]
    if "Attribute" in rpc:
        attr = getattr(request, "attribute_raw", 0) if "attribute_raw" in fields else 0
        return DaqmxError(E.ATTRIBUTE_NOT_SUPPORTED_IN_TASK_CONTEXT, "Specified property is not supported by the "
                          "device or is not applicable to the task.", f"Property: 0x{attr:X}", *where)
    return DaqmxError(E.FUNCTION_NOT_SUPPORTED_FOR_DEVICE, "Specified function is not supported by the device.",
                      f"Function: DAQmx{rpc}", "The USB-6210 twin does not simulate this function.", *where)
