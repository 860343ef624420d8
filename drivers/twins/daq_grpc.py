"""The USB-6210 twin: NI's own NiDAQmx gRPC service on loopback, backed by ``daq_task`` and the plant.

    with DaqTwin(plant) as twin:
        with nidaqmx.Task("uartlab", grpc_options=twin.grpc_options("uartlab")) as task: ...

The unmodified nidaqmx client (1.7.0) talks to it as to NI gRPC Device Server. The RPCs of AI voltage
acquisition are implemented (see ``DaqServicer``): channels and their properties, timing, triggers, reads
of arrays and of waveforms (``daq_waveform``), every-N-samples and done events, TDMS logging (``daq_tdms``).
Every other RPC of the service answers as NI-DAQmx on a USB-6210 would, with NI's error code
(``daq_not_supported``), not gRPC's UNIMPLEMENTED. Errors travel the way
grpc-device sends them (source/server/converters.h, ApiErrorAndDescriptionToStatus): status UNKNOWN,
NI's message, trailing metadata ``ni-error`` = the status code, plus ``ni-samps-per-chan-read`` on
reads. A read timeout is the exception, as in grpc-device's ReadAnalogF64: an OK reply carrying
status -200284 and the partial data. Sessions follow grpc-device's session repository: a named
session is attached to if it exists (AUTO), an empty name gets a generated one.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import queue
import threading
from concurrent import futures

import grpc
import nidaqmx
from nidaqmx import constants as C
from nidaqmx._stubs import nidaqmx_pb2 as pb
from nidaqmx._stubs import nidaqmx_pb2_grpc as pb_grpc
from nidaqmx.error_codes import DAQmxErrors as E
from session_pb2 import Session
from uartlab.drivers.twins import daq_attributes as A
from uartlab.drivers.twins.daq_not_supported import not_supported
from uartlab.drivers.twins.daq_task import DaqmxError, DaqStats, DaqTask, PlantLike
from uartlab.drivers.twins.daq_tdms import LogConfig
from uartlab.drivers.twins.daq_waveform import analog_waveforms

log = logging.getLogger(__name__)

WORKERS = 32  # each blocking read and each event stream holds a server thread while it waits


class RpcAbort(Exception):
    """A gRPC status that is not an NI-DAQmx error (session management, as grpc-device does it)."""

    def __init__(self, code: grpc.StatusCode, details: str):
        super().__init__(details)
        self.code, self.details = code, details


def _abort(context: grpc.ServicerContext, exc: DaqmxError) -> None:
    metadata = [("ni-error", str(exc.code))]
    if exc.samps_per_chan_read is not None:
        metadata.append(("ni-samps-per-chan-read", str(exc.samps_per_chan_read)))
    context.set_trailing_metadata(metadata)
    context.abort(grpc.StatusCode.UNKNOWN, exc.message)


def _rpc(method):
    """Every exception inside an RPC becomes a gRPC error the client turns into DaqError: bad input must
    never take the server down or leave the client with a bare traceback."""

    @functools.wraps(method)
    def wrapper(self, request, context):
        try:
            _check_enums_set(request)
            return method(self, request, context)
        except DaqmxError as exc:
            _abort(context, exc)
        except RpcAbort as exc:
            context.abort(exc.code, exc.details)
        except Exception as exc:
            log.exception("DAQ twin: %s failed", method.__name__)
            _abort(context, DaqmxError(E.PAL_SOFTWARE_FAULT, f"The DAQ twin failed in {method.__name__}: {exc!r}",
                                       f"Request: {type(request).__name__}({str(request)[:300]!r})"))

    return wrapper


# grpc-device's hand-written waveform reads take an unset waveform_attribute_mode as 0; its generated code
# refuses every other enum parameter given neither as the enum nor as _raw.
_ENUMS_WITH_DEFAULT = {"waveform_attribute_mode_enum"}


def _check_enums_set(request) -> None:
    """grpc-device rejects such a request itself (INVALID_ARGUMENT, no ni-error) before NI-DAQmx sees it."""
    for oneof in request.DESCRIPTOR.oneofs:
        if oneof.name.endswith("_enum") and oneof.name not in _ENUMS_WITH_DEFAULT \
                and request.WhichOneof(oneof.name) is None:
            raise RpcAbort(grpc.StatusCode.INVALID_ARGUMENT,
                           f"The value for {oneof.name.removesuffix('_enum')} was not specified or out of range")


def _event_stream(context: grpc.ServicerContext, sub, reply):
    """An event registration's replies, until it is unregistered, its task cleared or the stream cancelled."""
    context.add_callback(sub.close)  # a cancelled stream wakes its own loop
    context.send_initial_metadata(())
    while context.is_active():
        try:
            item = sub.events.get(timeout=0.5)
        except queue.Empty:
            continue
        if item is None:
            return
        yield reply(item)


def _enum(request, field: str) -> int:
    """An enum request field as its raw int: the client sends ``<field>_raw``, other clients the enum."""
    return getattr(request, f"{field}_raw") if request.WhichOneof(f"{field}_enum") == f"{field}_raw" \
        else int(getattr(request, field))


class DaqServicer(pb_grpc.NiDAQmxServicer):
    """The NiDAQmx service over a set of named ``DaqTask`` sessions on one device."""

    def __init__(self, plant: PlantLike, device: str, time_scale: float):
        self.plant, self.device, self.time_scale = plant, device, time_scale
        self.stats = DaqStats()
        self.stalled = threading.Event()   # fault injection: the sample clock delivers nothing while set
        self.tasks: dict[str, DaqTask] = {}
        self._lock = threading.Lock()
        self._unnamed = itertools.count()

    def task(self, request) -> DaqTask:
        name = request.task.name
        with self._lock:
            task = self.tasks.get(name)
        if task is None:
            raise DaqmxError(E.INVALID_TASK, "Task specified is invalid or does not exist.", f"Session Name: {name}")
        return task

    def clear_all(self) -> None:
        with self._lock:
            tasks, self.tasks = list(self.tasks.values()), {}
        for task in tasks:
            task.clear()

    # ------------------------------------------------------------ sessions and configuration
    @_rpc
    def CreateTask(self, request, context):
        name, behavior = request.session_name, int(request.initialization_behavior)
        with self._lock:
            if name in self.tasks and behavior == nidaqmx.SessionInitializationBehavior.INITIALIZE_SERVER_SESSION:
                raise RpcAbort(grpc.StatusCode.ALREADY_EXISTS,
                               f"Cannot initialize '{name}' when a session already exists.")
            if name not in self.tasks and behavior == nidaqmx.SessionInitializationBehavior.ATTACH_TO_SERVER_SESSION:
                raise RpcAbort(grpc.StatusCode.FAILED_PRECONDITION,
                               f"Cannot attach to '{name}' because a session has not been initialized.")
            new = name not in self.tasks
            if new:
                name = name or f"_unnamedTask<{next(self._unnamed)}>"  # DAQmx's own name for unnamed tasks
                self.tasks[name] = DaqTask(name, self.device, self.plant, self.time_scale, self.stats,
                                           stalled=self.stalled)
                self.stats.count("tasks_created")
        return pb.CreateTaskResponse(task=Session(name=name), new_session_initialized=new)

    @_rpc
    def ClearTask(self, request, context):
        task = self.task(request)
        with self._lock:
            self.tasks.pop(task.name, None)
        task.clear()
        return pb.ClearTaskResponse()

    @_rpc
    def CreateAIVoltageChan(self, request, context):
        task, units = self.task(request), _enum(request, "units")
        if units != C.VoltageUnits.VOLTS.value:
            raise DaqmxError(E.INVALID_ATTRIBUTE_VALUE, "The twin supports volts only (no custom scales).",
                             "Property: DAQmx_AI_Voltage_Units", f"Requested Value: {units}",
                             f"Channel Name: {request.physical_channel}")
        task.add_voltage_channels(request.physical_channel, request.name_to_assign_to_channel,
                                                _enum(request, "terminal_config"), request.min_val, request.max_val)
        return pb.CreateAIVoltageChanResponse()

    @_rpc
    def CfgSampClkTiming(self, request, context):
        self.task(request).configure_clock(request.rate, _enum(request, "sample_mode"), request.samps_per_chan,
                                           request.source)
        return pb.CfgSampClkTimingResponse()

    @_rpc
    def CfgDigEdgeStartTrig(self, request, context):
        task = self.task(request)
        task.configure_triggers(request.trigger_source, task.ref_trigger)
        return pb.CfgDigEdgeStartTrigResponse()

    @_rpc
    def CfgDigEdgeRefTrig(self, request, context):
        task = self.task(request)
        task.configure_triggers(task.start_trigger, (request.trigger_source, request.pretrigger_samples))
        return pb.CfgDigEdgeRefTrigResponse()

    @_rpc
    def DisableStartTrig(self, request, context):
        task = self.task(request)
        task.configure_triggers(None, task.ref_trigger)
        return pb.DisableStartTrigResponse()

    @_rpc
    def DisableRefTrig(self, request, context):
        task = self.task(request)
        task.configure_triggers(task.start_trigger, None)
        return pb.DisableRefTrigResponse()

    @_rpc
    def ConfigureLogging(self, request, context):
        self.task(request).configure_logging(LogConfig(request.file_path, _enum(request, "logging_mode"),
                                                       request.group_name, _enum(request, "operation")))
        return pb.ConfigureLoggingResponse()

    @_rpc
    def CfgInputBuffer(self, request, context):
        self._set(self.task(request), "Buffer", 0x186C, request.num_samps_per_chan)
        return pb.CfgInputBufferResponse()

    # ------------------------------------------------------------ run state
    @_rpc
    def StartTask(self, request, context):
        self.task(request).start()
        return pb.StartTaskResponse()

    @_rpc
    def StopTask(self, request, context):
        self.task(request).stop()
        return pb.StopTaskResponse()

    @_rpc
    def TaskControl(self, request, context):
        task, action = self.task(request), C.TaskMode(_enum(request, "action"))
        if action == C.TaskMode.TASK_START:
            task.start()
        elif action in (C.TaskMode.TASK_STOP, C.TaskMode.TASK_ABORT, C.TaskMode.TASK_UNRESERVE):
            task.stop()
        else:  # verify, commit, reserve: the twin has nothing to reserve, so they all verify
            task.verify()
        return pb.TaskControlResponse()

    @_rpc
    def IsTaskDone(self, request, context):
        return pb.IsTaskDoneResponse(is_task_done=self.task(request).is_done())

    @_rpc
    def WaitUntilTaskDone(self, request, context):
        self.task(request).wait_until_done(request.time_to_wait)
        return pb.WaitUntilTaskDoneResponse()

    # ------------------------------------------------------------ data
    @_rpc
    def ReadAnalogF64(self, request, context):
        try:
            flat, n_read, status = self.task(request).read(request.num_samps_per_chan, request.timeout,
                                                           _enum(request, "fill_mode"), request.array_size_in_samps)
        except DaqmxError as exc:
            exc.samps_per_chan_read = exc.samps_per_chan_read or 0  # grpc-device always sends this trailer
            raise
        context.set_trailing_metadata([("ni-samps-per-chan-read", str(n_read))])
        return pb.ReadAnalogF64Response(read_array=flat, samps_per_chan_read=n_read, status=status)

    @_rpc
    def ReadAnalogWaveforms(self, request, context):
        task = self.task(request)
        try:
            block = task.read_block(request.num_samps_per_chan, request.timeout)
        except DaqmxError as exc:
            exc.samps_per_chan_read = exc.samps_per_chan_read or 0
            raise
        with task.cond:
            channels = [task.channels[i] for i in task.read_columns()]
        context.set_trailing_metadata([("ni-samps-per-chan-read", str(len(block.scans)))])
        return pb.ReadAnalogWaveformsResponse(
            waveforms=analog_waveforms(block.scans, block.t0, block.dt_s, channels,
                                       _enum(request, "waveform_attribute_mode")),
            samps_per_chan_read=len(block.scans), status=block.status)

    @_rpc
    def ReadAnalogScalarF64(self, request, context):
        task = self.task(request)
        flat, _, status = task.read(1, request.timeout, C.FillMode.GROUP_BY_CHANNEL.value, len(task.channels))
        if status:
            raise DaqmxError(status, "Some or all of the samples requested have not yet been acquired.")
        return pb.ReadAnalogScalarF64Response(value=float(flat[0]))

    def RegisterEveryNSamplesEvent(self, request, context):
        """Server-streaming: initial metadata once registered (the client waits for it before it starts
        the task), then one message per N samples acquired, until unregistered, cleared or cancelled."""
        yield from _event_stream(context, self._register_every_n(request, context),
                                 lambda n: pb.RegisterEveryNSamplesEventResponse(
                                     every_n_samples_event_type_raw=C.EveryNSamplesEventType.ACQUIRED_INTO_BUFFER.value,
                                     n_samples=n))

    def RegisterDoneEvent(self, request, context):
        """Server-streaming as the every-N event: one message, with the task's status, each time it finishes."""
        yield from _event_stream(context, self._register_done(request, context),
                                 lambda status: pb.RegisterDoneEventResponse(status=status))

    @_rpc
    def _register_done(self, request, context):
        return self.task(request).register_done()

    @_rpc
    def UnregisterDoneEvent(self, request, context):
        self.task(request).unregister_done()
        return pb.UnregisterDoneEventResponse()

    @_rpc
    def _register_every_n(self, request, context):
        if _enum(request, "every_n_samples_event_type") != C.EveryNSamplesEventType.ACQUIRED_INTO_BUFFER.value:
            raise DaqmxError(E.EVERY_N_SAMPS_TRANSFERRED_FROM_BUFFER_NOT_FOR_INPUT, "Every N Samples "
                             "Transferred From Buffer event is not supported for input tasks.")
        return self.task(request).register_every_n(request.n_samples)

    @_rpc
    def UnregisterEveryNSamplesEvent(self, request, context):
        self.task(request).unregister_every_n()
        return pb.UnregisterEveryNSamplesEventResponse()

    def GetErrorString(self, request, context):
        try:  # NI's name of the code as a sentence; unknown codes get "" and the client's own wording
            text = E(request.error_code).name.replace("_", " ").capitalize() + "."
        except ValueError:
            text = ""
        return pb.GetErrorStringResponse(error_string=text)

    # ------------------------------------------------------------ attributes
    def _get(self, group: str, attr: int, request) -> object:
        table = A.GROUPS[group]
        if attr not in table:
            raise DaqmxError(E.ATTRIBUTE_NOT_SUPPORTED_IN_TASK_CONTEXT, "Specified property is not supported by "
                             "the device or is not applicable to the task.", f"Property: 0x{attr:X}",
                             f"Device: {self.device}")
        if group in ("Device", "SystemInfo"):
            if group == "Device" and request.device_name.lower() != self.device.lower():
                raise DaqmxError(E.INVALID_DEVICE_ID, "Device identifier is invalid.",
                                 f"Device Specified: {request.device_name}", f"Suggested Device(s): {self.device}")
            return table[attr](self.device)
        task = self.task(request)
        with task.cond:
            if group != "Chan":
                return table[attr](task)
            values = {repr(table[attr](task.channels[i])): table[attr](task.channels[i])
                      for i in task.find_channels(request.channel)}
        if len(values) > 1:
            raise DaqmxError(E.PRPTY_GET_SPECD_ACTIVE_CHAN_FAILED_DUE_TO_DIFFT_VALS, "Property cannot be read "
                             "because the specified channels have different values.", f"Property: 0x{attr:X}",
                             f"Channels: {request.channel}", f"Task Name: {task.name}")
        return next(iter(values.values()))

    def _set(self, task: DaqTask, group: str, attr: int, value, channel: str = "") -> None:
        """The settable attributes the app and NI's examples use; value None resets to the default."""
        with task.cond:
            if group == "Chan" and attr in A.CHAN_SETTERS:
                key, default = A.CHAN_SETTERS[attr]
                task.configure_channels(channel, **{key: default if value is None else value})
            elif group == "Read" and attr in A.LOGGING_FIELDS:
                field = A.LOGGING_FIELDS[attr]
                config = dataclasses.replace(task.logging, **{field: getattr(LogConfig(), field)
                                                              if value is None else value})
                task.configure_logging(config)
            elif (group, attr) == ("Read", 0x1823):
                task.read_channels = None if value is None else task.find_channels(value)
            elif (group, attr) == ("Read", 0x1215):
                task.read_all_avail = bool(value)
            elif (group, attr) == ("Buffer", 0x186C):
                task.set_buffer_size(value)
            elif (group, attr) == ("Timing", 0x1344) and value is not None:
                task.configure_clock(float(value), task.sample_mode or C.AcquisitionType.CONTINUOUS.value,
                                     task.samps_per_chan)
            else:
                raise DaqmxError(E.ATTRIBUTE_NOT_SUPPORTED_IN_TASK_CONTEXT, "Specified property cannot be set "
                                 "on the DAQ twin.", f"Property: 0x{attr:X}", f"Task Name: {task.name}")


def _make_get(group: str, response_cls):
    fields = response_cls.DESCRIPTOR.fields_by_name
    members = set(fields["value"].enum_type.values_by_number) if "value_raw" in fields else None

    def as_enum(raw: int) -> int:
        return raw if raw in members else 0  # type: ignore[operator]

    def get(self, request, context):
        value = self._get(group, _enum(request, "attribute"), request)
        if members is None:
            return response_cls(value=value)
        # grpc-device fills both: nidaqmx reads value_raw, clients of the enum read value (0 where the raw
        # value is no member of the enum)
        enum = [as_enum(v) for v in value] if isinstance(value, list | tuple) else as_enum(value)
        return response_cls(value=enum, value_raw=value)
    return get


def _make_set(group: str, kind: str | None, response_cls):
    def set_(self, request, context):
        value = None if kind is None else _enum(request, "value") if kind == "Int32" else request.value
        self._set(self.task(request), group, _enum(request, "attribute"), value, getattr(request, "channel", ""))
        return response_cls()
    return set_


def _not_supported(name: str):
    def answer(self, request, context):
        raise not_supported(name, request, self.device)
    return answer


def _install(name: str, method) -> None:
    method.__name__ = method.__qualname__ = name  # error messages name the RPC
    setattr(DaqServicer, name, _rpc(method))


# Get/Set/Reset<Group>Attribute<Type> for every group the twin knows: one generic body each.
for _group, _kind in itertools.product(A.GROUPS, A.TYPES):
    if hasattr(pb, f"Get{_group}Attribute{_kind}Response"):
        _install(f"Get{_group}Attribute{_kind}", _make_get(_group, getattr(pb, f"Get{_group}Attribute{_kind}Response")))
    if _group in A.SETTABLE and hasattr(pb, f"Set{_group}Attribute{_kind}Response"):
        _install(f"Set{_group}Attribute{_kind}",
                 _make_set(_group, _kind, getattr(pb, f"Set{_group}Attribute{_kind}Response")))
for _group in A.SETTABLE:
    _install(f"Reset{_group}Attribute", _make_set(_group, None, getattr(pb, f"Reset{_group}AttributeResponse")))
# Every other RPC of the service: NI's error for it, as the driver behind grpc-device would answer.
for _name in dir(pb_grpc.NiDAQmxServicer):
    if not _name.startswith("_") and getattr(DaqServicer, _name) is getattr(pb_grpc.NiDAQmxServicer, _name):
        _install(_name, _not_supported(_name))


class DaqTwin:
    """The simulated USB-6210: a gRPC server on loopback speaking NI's NiDAQmx service."""

    def __init__(self, plant: PlantLike, device: str = "Dev1", address: str = "127.0.0.1:0",
                 time_scale: float = 1.0):
        self.plant, self.device, self.time_scale = plant, device, time_scale
        self.address = address
        self._servicer = DaqServicer(plant, device, time_scale)
        self._server: grpc.Server | None = None
        self._channels: list[grpc.Channel] = []

    @property
    def stats(self) -> DaqStats:
        return self._servicer.stats

    def start(self) -> DaqTwin:
        # No SO_REUSEPORT (gRPC's default on Linux): a second twin on the same port must fail, not share it.
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="daq-twin-rpc"),
                             options=[("grpc.so_reuseport", 0)])
        pb_grpc.add_NiDAQmxServicer_to_server(self._servicer, server)
        host = self.address.rsplit(":", 1)[0]
        try:
            port = server.add_insecure_port(self.address)
        except RuntimeError:
            port = 0
        if not port:
            raise OSError(f"DAQ twin cannot listen on {self.address}: the port is taken or the address is invalid")
        server.start()
        self._server, self.address = server, f"{host}:{port}"
        return self

    def grpc_options(self, session_name: str = "uartlab") -> nidaqmx.GrpcSessionOptions:
        """Options for ``nidaqmx.Task(name, grpc_options=...)``. The client insists that a non-empty
        session name equals the task name; pass "" to let each task have its own generated session."""
        if self._server is None:
            raise RuntimeError("DaqTwin.grpc_options() before start()")
        # Unlimited receive size: one read of 12 channels x 100 kS is 9.6 MB, over gRPC's 4 MB default.
        channel = grpc.insecure_channel(self.address, options=[("grpc.max_receive_message_length", -1)])
        self._channels.append(channel)
        return nidaqmx.GrpcSessionOptions(channel, session_name)

    def stall(self) -> None:
        """Fault injection: acquisition delivers no samples (a USB stall) until ``unstall()``; reads time out."""
        self._servicer.stalled.set()

    def unstall(self) -> None:
        self._servicer.stalled.clear()

    def stop(self) -> None:
        self._servicer.clear_all()  # ends every acquisition thread and event stream before the server goes
        if self._server is not None:
            self._server.stop(grace=0.5).wait()
            self._server = None
        for channel in self._channels:
            channel.close()
        self._channels.clear()

    def __enter__(self) -> DaqTwin:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
