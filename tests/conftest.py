"""Shared fixtures and test data. Qt tests run offscreen; that is set before anything imports Qt."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# What the window remembers (app/gui/settings.py) goes to a folder of this test session's own, never the
# operator's; subprocesses the tests start inherit it. Removed when the session ends (pytest_unconfigure).
os.environ["UARTLAB_CONFIG_DIR"] = tempfile.mkdtemp(prefix="uartlab-test-config-")
# A rig core the tests start (`uartlab run` starts one when none answers) listens in this session's own folder,
# never at the user's default address, where a core of the operator's (or of another test session) may run.
os.environ["UARTLAB_CORE"] = "ipc://" + os.path.join(tempfile.mkdtemp(prefix="uartlab-test-core-"), "core")
SESSION_FOLDERS = (os.environ["UARTLAB_CONFIG_DIR"], os.path.dirname(os.environ["UARTLAB_CORE"][len("ipc://"):]))
try:  # Qt's own user settings too (a QFileDialog saves its state in QtProject.conf), in this process
    from PySide6.QtCore import QSettings
except ImportError:
    pass
else:
    for _format in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(_format, QSettings.Scope.UserScope, os.environ["UARTLAB_CONFIG_DIR"])

from uartlab.sim import Finger, FingerParams  # noqa: E402

# Where the window tests' screenshots go: pictures of real runs, looked at by people (docs/screenshots).
SHOTS = Path(os.environ.get("UARTLAB_SCREENSHOTS", Path(__file__).parent / "screenshots"))


def shoot(widget, name: str) -> Path:
    """A screenshot of ``widget`` as the operator sees it: after the event loop has laid out what changed
    (a label given a longer sentence takes its new height on the next pass, not at once)."""
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    assert widget.grab().save(str(path))
    return path


# Where a rig's default recording folder ("recordings", relative) lands for the tests: in the checkout. A test
# records into a folder of its own; the fixture below fails one that leaves a file here.
WHERE_THE_TESTS_RUN_RECORDINGS = Path.cwd() / "recordings"


def _recordings_here() -> set[str]:
    try:
        return set(os.listdir(WHERE_THE_TESTS_RUN_RECORDINGS))
    except OSError:
        return set()


@pytest.fixture(autouse=True)
def _nothing_recorded_where_the_tests_run():
    before = _recordings_here()
    yield
    new = _recordings_here() - before
    assert not new, f"recorded into {WHERE_THE_TESTS_RUN_RECORDINGS}, not the test's own folder: {sorted(new)}"


# Fixtures that bring up a twin rig of their own: a test using one runs with the rig tests.
RIG_FIXTURES = frozenset({"twin_session_file"})


def pytest_unconfigure(config):
    """This session's own folders go (an xdist worker ends without running atexit handlers)."""
    for folder in SESSION_FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_itemcollected(item):
    """With two worker processes (pytest-xdist, ``--dist loadgroup``), the tests that keep real time on a rig
    (marked ``realtime``, or ``slow`` and not ``compute``, or using a rig fixture) run one after another in
    one worker while the other takes the rest: two rigs at once, each a core, twin and model process with
    deadline threads, put the 2-core test machine at a load of ~10, past what any rig is asked to bear.
    (Marked as each test is collected: xdist reads the groups in its own collection hook.)"""
    slow_on_a_rig = item.get_closest_marker("slow") and not item.get_closest_marker("compute")
    if (item.get_closest_marker("realtime") or slow_on_a_rig
            or RIG_FIXTURES.intersection(getattr(item, "fixturenames", ()))):
        item.add_marker(pytest.mark.xdist_group("rig"))


# The worker that takes the other tests (sims, fits, linters, builds: CPU-bound) yields to the rig tests'
# processes: at nice 0 it would add a third CPU-bound process to `with-load 2`'s two for the rig tests.
OTHER_TESTS_NICE = 5


_PRIORITY_SET: set[bool] = set()   # in this worker: for the rig group (True), for the other tests (False)


@pytest.fixture(autouse=True)
def _worker_priority_for_its_tests(request):
    """In an xdist worker, the first test of each kind sets the worker's priority for its tests:
    - a rig-group test raises the worker's threads to the priority a rig core gives its own
      (app/run/realtime.py, where the OS allows): the rigs these tests bring up in the worker's own process
      otherwise ran their device threads at nice 0 beside `with-load 2`'s processes until an engine started,
      and a bus thread starved past the servos' 500 ms watchdog;
    - any other test lowers it to OTHER_TESTS_NICE for good, outright (not os.nice's increment, which from
      the rig group's -10 would give -5). The scheduler hands the rig group, its largest unit, to a worker
      first, and that worker takes other tests only once the group is done, so no rig test runs lowered."""
    rig = request.node.get_closest_marker("xdist_group") is not None
    if os.environ.get("PYTEST_XDIST_WORKER") and rig not in _PRIORITY_SET:
        _PRIORITY_SET.add(rig)
        if rig:
            from uartlab.app.run import realtime

            realtime.prepare_process(who="the rig tests' worker")
        else:
            os.setpriority(os.PRIO_PROCESS, 0, OTHER_TESTS_NICE)
    yield


@pytest.fixture(autouse=True)
def _fresh_heap_for_realtime_tests(request):
    """Tests marked ``realtime`` run device threads against deadlines (the stale-stream interlock trips at
    0.25 s). A full cyclic-GC pass stops every thread, and over the ~350k objects this long test process
    accumulates it takes 200-400 ms (measured); a fresh `uartlab` process has a third of that heap. So
    these tests start with what earlier tests left alive frozen out of the collector's reach. No collection
    first: that pass is itself the stall, and a module's rig is already streaming when the fixture runs."""
    if request.node.get_closest_marker("realtime") is None:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture(scope="session", autouse=True)
def _next_twin_process_loads_ahead():
    """Dozens of rigs start a twin process each: the next one imports and loads its kernels while a test
    runs (app/rig/twin_process.py keep_spares), so a rig start costs the twin's set-up only."""
    from uartlab.app.rig.twin_process import keep_spares

    keep_spares(True)
    yield
    keep_spares(False)


@pytest.fixture(scope="module", autouse=True)
def _no_window_outlives_its_module():
    """After a module that opened windows: every top-level widget closed and deleted, the deletions run,
    and what is left collected here, on the GUI thread, before later tests' threads could (a Qt object
    destroyed on another thread while the GUI thread processes events crashes the process); then automatic
    GC back on (the windows' pyqtgraph GarbageCollector turns it off for the whole process)."""
    yield
    widgets = sys.modules.get("PySide6.QtWidgets")
    app = widgets.QApplication.instance() if widgets is not None else None
    if app is None:
        return
    from PySide6.QtCore import QCoreApplication, QEvent

    for widget in app.topLevelWidgets():
        widget.close()
        widget.deleteLater()
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()
        if gc.collect() == 0:
            break
    gc.enable()


@pytest.fixture
def window(qtbot, tmp_path):
    """The operator window as `uartlab gui` opens it (1600 x 1000, shown), its settings and its core address
    this test's own: no core answers there until the test starts one."""
    from PySide6.QtCore import QSettings
    from uartlab.app.gui.app import qt_app
    from uartlab.app.gui.main_window import MainWindow

    qt_app()   # pyqtgraph's options on the QApplication pytest-qt made
    w = MainWindow(QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat),
                   core_address=f"ipc://{tmp_path / 'core'}")
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


@pytest.fixture(scope="session")
def params() -> FingerParams:
    return FingerParams.uart()


@pytest.fixture(scope="session")
def finger(params) -> Finger:
    return Finger(params)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261202)


def random_pose(params: FingerParams, rng: np.random.Generator, margin_rad: float = 0.05) -> np.ndarray:
    lo, hi = params.rom_rad[:, 0] + margin_rad, params.rom_rad[:, 1] - margin_rad
    return rng.uniform(lo, hi)


# What a twin device late on a loaded machine says (drivers/mx64_bus.py, the stale-stream interlock): a test of
# something else may try again on a fresh rig when its run ended with this.
DEVICE_TIMING = r"watchdog|stale|no reply|no \w+ data|time(d)? ?out"


def nice_allowed(nice: int) -> bool:
    """Whether a process of this user may run at ``nice`` (below 0: root, CAP_SYS_NICE or a nice limit)."""
    probe = subprocess.run([sys.executable, "-c", f"import os; os.setpriority(os.PRIO_PROCESS, 0, {nice})"],
                           capture_output=True)
    return probe.returncode == 0


def thread_nices(pid: int, policy: int | None = None) -> list[int]:
    """The nice value of each thread of process ``pid`` (Linux: per thread), of those at ``policy`` if given."""
    tids = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    return [os.getpriority(os.PRIO_PROCESS, tid) for tid in tids
            if policy is None or os.sched_getscheduler(tid) == policy]


def wait_for(condition, timeout_s: float = 2.0, poll_s: float = 0.005) -> bool:
    """Poll ``condition`` until true or ``timeout_s``: for what a twin's or rig's thread does on its own clock
    (a loaded machine may run it late)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
    return True


@pytest.fixture(scope="module")
def daq_plant():
    """A plant nobody advances (no PlantClock): each DAQ channel holds its value plus fresh noise."""
    from uartlab.drivers.twins.plant import Plant, PlantConfig

    return Plant(PlantConfig())


@pytest.fixture(scope="module")
def daq_twin(daq_plant):
    """The USB-6210 twin (NI-DAQmx over gRPC, on a free port) sampling ``daq_plant``, for the module."""
    from uartlab.drivers.twins.daq_grpc import DaqTwin

    with DaqTwin(daq_plant) as twin:
        yield twin


def short_suite_toml(pull_s: float = 1.0) -> str:
    """A one-trial suite for runs on the twin: ED pulled 10 mm over ``pull_s`` and back."""
    return f"""
[suite]
name = "short"
repeats = 1
[[trial]]
name = "ED"
pose = "Flex"
pulls = [{{ tendon = "ED", amplitude_mm = 10.0, duration_s = {pull_s!r} }}]
return = true
"""


# FT18766.cal: a real ATI calibration (Delta IP60, SI-660-60), copied byte for byte from atiiaftt 0.1.1
# (github shayden--/atiiaftt, atiiaftt/test/FT18766.cal at commit 09f35acd2aff462c57a71b190bfc528d9ab2f051;
# MIT licence, Copyright (c) 2018 Tyson Boer). It is kept here as text so the tests need nothing outside the
# repository; the digest pins the bytes. drivers/test_ati.py checks drivers/ati.py against ATI's C library on it.
FT18766_SHA256 = "ee321e4241b3285723d733deb808121fb14114ae053eb95666fdfd4a30259be8"
FT18766_LINES = (
    '<?xml version="1.0" encoding="utf-8"?>',
    '<!-- NOTE: To parse this file for your own software, use the "UserAxis" elements     -->',
    '<!-- to construct the calibration matrix.  The "Axis" elements contain a scaled and  -->',
    "<!-- transformed version of the matrix used for ATI's internal purposes only.  When  -->",
    '<!-- you send your sensor back for recalibration, or replace your sensor with a new  -->',
    '<!-- one, you will receive a new calibration file with a different matrix.  Make     -->',
    '<!-- sure any custom software you write stays up to date with the latest version of  -->',
    '<!-- the calibration matrix.                                                         -->',
    '<FTSensor  Serial="FT18766" BodyStyle="Delta IP60" Family="DAQ" NumGages="6" CalFileVersion="1.1">',
    '\t<Calibration  PartNumber="SI-660-60" CalDate="5/17/2016" ForceUnits="N" TorqueUnits="N-m" '
    'DistUnits="m" OutputMode="Ground Referenced Differential" OutputRange="20" HWTempComp="True" '
    'GainMultiplier="1" CableLossDetection="False" OutputBipolar="True">',
    '\t\t<Axis Name="Fx" values=" -0.90361   0.16847  -1.45054 -35.83695   2.19920  33.74633 " max="660" '
    'scale="0.498178167356047"/>',
    '\t\t<Axis Name="Fy" values="  0.10894  40.17421  -1.99940 -20.54550  -0.38501 -19.71422 " max="660" '
    'scale="0.498178167356047"/>',
    '\t\t<Axis Name="Fz" values=" 19.77713  -0.78943  19.86271  -0.41419  19.82635  -0.74699 " max="1980" '
    'scale="0.164640629289319"/>',
    '\t\t<Axis Name="Tx" values=" -0.07411   0.00387 -34.79753   0.76111  34.77590  -1.32295 " max="60" '
    'scale="8.27567584790681"/>',
    '\t\t<Axis Name="Ty" values=" 39.04234  -1.50388 -19.61380   0.43996 -19.99941   0.75149 " max="60" '
    'scale="8.27567584790681"/>',
    '\t\t<Axis Name="Tz" values=" -0.05465 -19.44687  -1.35627 -20.23424  -0.94147 -19.07468 " max="60" '
    'scale="7.47971806962217"/>',
    '\t\t<BasicTransform Dx="0" Dy="0" Dz="0.0191262" Rx="0" Ry="0" Rz="0"/>',
    '\t\t<UserAxis Name="Fx" values=" -1.81382   0.33818  -2.91170 -71.93601   4.41448  67.73947 " max="660"/>',
    '\t\t<UserAxis Name="Fy" values="  0.21867  80.64226  -4.01342 -41.24127  -0.77283 -39.57264 " max="660"/>',
    '\t\t<UserAxis Name="Fz" values=" 120.12303  -4.79486  120.64280  -2.51570  120.42200  -4.53708 " max="1980"/>',
    '\t\t<UserAxis Name="Tx" values=" -0.00477   1.54285  -4.28156  -0.69682   4.18740  -0.91673 " max="60"/>',
    '\t\t<UserAxis Name="Ty" values="  4.75241  -0.18819  -2.31436   1.42903  -2.50108  -1.20479 " max="60"/>',
    '\t\t<UserAxis Name="Tz" values=" -0.00731  -2.59995  -0.18133  -2.70521  -0.12587  -2.55019 " max="60"/>',
    '\t</Calibration>',
    '</FTSensor>',
    '',
    '',
)
FT18766 = "\r\n".join(FT18766_LINES)


@contextlib.contextmanager
def mounted_tmpfs(folder, size_mb: int):
    """A real small disk (tmpfs of ``size_mb``) at ``folder``, for disk-full tests; skips where mounting is not
    allowed. Unmounted lazily at the end: a leaked handle must not leave it mounted."""
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a real disk-full needs root to mount a small tmpfs")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(folder)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def killed_after_a_flush(path, make_recorder) -> str:
    """``path`` as a recorder killed -9 leaves it: ``make_recorder(path)`` in a forked child, flushed, then the
    child kills itself (no close, no atexit: what a crash or an operator's kill -9 leaves)."""
    def child() -> None:
        make_recorder(str(path)).flush()
        os.kill(os.getpid(), signal.SIGKILL)

    import multiprocessing

    p = multiprocessing.get_context("fork").Process(target=child)
    p.start()
    p.join()
    assert p.exitcode == -signal.SIGKILL
    return str(path)


class ScriptedRig:
    """A ``RigLike`` (app/run/rig_like.py) whose measurements the test publishes: the real hub and stream
    specs, null actuators (every command counted, nothing moves), the given rig.toml. Nothing streams on
    its own: ``publish`` puts one sample of each device stream into the hub at the host time now."""

    def __init__(self, config=None, *, has_nano17: bool = False, has_joint_angles: bool = True,
                 time_scale: float = 1.0):
        from uartlab.app.rig.config import default_rig_config
        from uartlab.app.run.replayed_rig import NullActuators
        from uartlab.hub import Hub
        from uartlab.schema import actuators_spec, daq_spec, joints_spec, mocap_spec, runner_spec

        self.config = config if config is not None else default_rig_config()
        self.hub = Hub()
        for spec in (actuators_spec(100.0), daq_spec(1000.0), mocap_spec(["tip"], 100.0), joints_spec(100.0),
                     runner_spec()):
            self.hub.register(spec)
        self.engine = None
        self.actuators = NullActuators()
        self.time_scale = time_scale
        self.has_nano17, self.has_sea_forces, self.has_joint_angles = has_nano17, True, has_joint_angles
        self.marker_names: tuple[str, ...] = ("tip",)
        self.places_finger_itself, self.twin_plant = True, None
        self.placed: list[tuple[str, float | None]] = []

    def publish(self, tendon_force_N=(1.0,) * 6, excursion_m=(0.0,) * 6, angles_rad=(0.0, 0.5, 0.5, 0.3)) -> None:
        from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK, MOCAP
        from uartlab.streams import Record

        now = time.monotonic()
        self.hub.publish(Record.single(ACTUATORS.stream, now, excursion_m=np.asarray(excursion_m, float),
                                       hardware_error=np.zeros(6, np.int64), moving=np.zeros(6, bool)))
        self.hub.publish(Record.single(DAQ.stream, now, tendon_force_N=np.asarray(tendon_force_N, float),
                                       wrench=np.zeros(6), gauge_V=np.zeros(6)))
        self.hub.publish(Record.single(MOCAP.stream, now, markers_m=np.zeros((1, 3))))
        self.hub.publish(Record.single(JOINTS_IK.stream, now, angles_rad=np.asarray(angles_rad, float),
                                       well_posed=True))

    def nano17_saturated(self, gauge_V):
        return np.zeros(np.shape(gauge_V), dtype=bool)

    def stream_age_limits_s(self) -> dict[str, float]:
        ages = dict(self.config.interlocks.max_stream_age_s)
        if not self.has_joint_angles:
            ages.pop("joints", None)
        return ages

    def health(self) -> dict:
        return {}

    def clock_sync(self) -> dict:
        return {}

    def calibration_status(self) -> tuple[list[str], list[str]]:
        return [], []

    def model_params(self, base=None):
        return (base or FingerParams.uart()), []

    def tare_nano17(self, wait_s: float = 0.0) -> bool:
        return True

    def place_finger(self, pose: str, surface_angle_deg: float | None) -> bool:
        self.placed.append((pose, surface_angle_deg))
        return True

    def motion(self, name: str, **limits):
        from uartlab.app.run.procedure import ProcedureRun

        return ProcedureRun(self, name, **limits).start()

    def stop(self) -> None:
        pass


# ------------------------------------------------------------------ a fake sysfs for USB serial adapters
def usb_serial_device(sysfs: Path, tty: str, driver: str = "ftdi_sio", latency_ms: int | None = 16) -> Path:
    """A tty in the fake tree the way the kernel shows it: its driver link and, for ftdi_sio, latency_timer."""
    device = sysfs / "bus/usb-serial/devices" / tty
    device.mkdir(parents=True)
    drivers = sysfs / "bus/usb-serial/drivers" / driver
    drivers.mkdir(parents=True, exist_ok=True)
    (device / "driver").symlink_to(drivers)
    if latency_ms is not None:
        (device / "latency_timer").write_text(f"{latency_ms}\n")
    return device


def by_id_link(dev: Path, tty: str) -> Path:
    """/dev/serial/by-id/usb-FTDI_... -> ../../ttyUSB0, as udev makes it (the tty itself need not exist)."""
    link = dev / "serial/by-id/usb-FTDI_USB__-__Serial_Converter_FT4NNZ55-if00-port0"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path("../..") / tty)
    return link


# ------------------------------------------------------------------ one session recorded on the twin rig
# A free-motion and a contact trial through the whole stack (the twin rig's MX-64 bus, USB-6210 over gRPC,
# Motive over NatNet, IK, the protocol runner, the recorder), at 1x (2x trips under load), on a twin whose
# "true" finger is FingerParams.uart().perturbed(TWIN_SESSION_PERTURBATION, 0). Recorded once per test
# session: `compare` (tests/app/compare/test_compare_twin.py) and the model fit
# (tests/app/procedures/test_from_sessions.py) read the same file.
TWIN_SESSION_PERTURBATION = 0.15
TWIN_SESSION_FREE, TWIN_SESSION_CONTACT = "free/FDP", "contact/Curl/FDP+ED@67.5deg"
TWIN_SESSION_SUITE = f"""
[suite]
name = "model_fit"
repeats = 1
[suite.settle]
speed_deg_s = 0.1
measured_speed_deg_s = 1.0
window_s = 1.0
hold_s = 0.1
timeout_s = 20.0
[suite.limits]
max_excursion_mm = 20.0
max_tendon_force_N = 40.0
max_fingertip_force_N = 15.0
[[trial]]
name = "{TWIN_SESSION_FREE}"
pose = "Flex"
pulls = [ {{ tendon = "FDP", amplitude_mm = 15, duration_s = 4 }} ]
return = true
[[trial]]
name = "{TWIN_SESSION_CONTACT}"
pose = "Curl"
surface_angle_deg = 67.5
pulls = [ {{ tendon = "FDP", amplitude_mm = 15, duration_s = 4 }},
          {{ tendon = "ED", amplitude_mm = 7.5, duration_s = 4 }} ]
return = true
"""


def _record_twin_session(path: Path) -> tuple[list[str], str]:
    """(each trial's outcome, how the run ended). The twin rig as shipped (seed 0, 1x) but for its truth."""
    from importlib.resources import files

    from uartlab.app.record.logs import event_level
    from uartlab.app.record.player import SessionFile
    from uartlab.app.record.session import RecordingSession
    from uartlab.app.rig.config import parse_rig_config
    from uartlab.app.rig.rig import Rig
    from uartlab.app.run.experiment import Experiment
    from uartlab.protocols.suite import parse_suite

    text = files("uartlab.app").joinpath("data/twin_rig.toml").read_text(encoding="utf-8")
    text = text.replace("perturbation = 0.0 ", f"perturbation = {TWIN_SESSION_PERTURBATION} ")
    with Rig(parse_rig_config(text, "twin_rig.toml")) as rig:
        session = RecordingSession(rig, path)
        time.sleep(0.3)        # the twin starts free: the Nano17 is unloaded, tare it as an operator would
        rig.tare_nano17()
        time.sleep(0.3)
        experiment = Experiment(rig, parse_suite(TWIN_SESSION_SUITE, "model_fit.toml"), session)
        try:
            experiment.start(preflight_timeout_s=10.0)
            assert experiment.wait(120.0)
            status = experiment.status()
            outcomes, ended = [r.outcome for r in status.results], f"{status.phase}: {status.fault_reason}"
        finally:
            experiment.close()
            session.close()
    with SessionFile(path) as f:   # a stale-stream trip outside the trials is in the file too
        warned = [f"{e.kind}: {e.message}" for e in f.events() if event_level(e.kind) >= logging.WARNING]
    return outcomes, "; ".join([ended, *warned])


@pytest.fixture(scope="session")
def twin_session_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("twin_session") / "twin.h5"
    # the realtime fixture freezes the heap per test, which is after a session fixture has run: freeze it here
    # too, so a full GC pass cannot stall the rig's device threads past the stale-stream limit
    gc.freeze()
    try:
        for _ in range(2):  # a loaded 2-core machine can still trip a stale-stream interlock: once more
            outcomes, ended = _record_twin_session(path)
            if outcomes == ["settled", "settled"] and ended == "DONE: None":   # the readers expect a clean file
                return path
            path.unlink(missing_ok=True)
    finally:
        gc.unfreeze()
    pytest.skip(f"the twin rig did not complete the suite twice ({outcomes}, {ended}): a rig problem, not the test's")


def damage_chunk(path: str, dataset: str, row: int) -> tuple[int, int]:
    """Flip bytes in the middle of the stored chunk that holds ``row`` of ``dataset``, as a bad sector
    would; returns that chunk's [start, stop) rows."""
    with h5py.File(path, "r") as f:
        d = f[dataset]
        start = row - row % d.chunks[0]
        stored = d.id.get_chunk_info_by_coord((start,) + (0,) * (d.ndim - 1))
        stop = min(start + d.chunks[0], d.shape[0])
    with open(path, "r+b") as raw:
        raw.seek(stored.byte_offset + stored.size // 2)
        good = raw.read(8)
        raw.seek(stored.byte_offset + stored.size // 2)
        raw.write(bytes(b ^ 0xFF for b in good))
    return start, stop
