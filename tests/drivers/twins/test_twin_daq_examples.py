"""nidaqmx-python's own example programs (tests/vendor/nidaqmx/, unmodified) against the USB-6210 twin.

The twin runs as a user starts it, ``uartlab twin up`` in its own process; each example runs in another,
through run_nidaqmx_example.py (nidaqmx pointed at the twin's gRPC server), with key presses on its stdin
and Ctrl+C as a signal. Both run in one folder, so a TDMS file the twin writes for a relative path is where
the example looks for it. Values are checked against the twin itself: a reference read of the same
channel by our own client in this process, through the same server.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
import nidaqmx
import numpy as np
import pytest
from nidaqmx.constants import AcquisitionType, TerminalConfiguration

EXAMPLES = Path(__file__).parents[2] / "vendor" / "nidaqmx" / "examples"
RUNNER = Path(__file__).with_name("run_nidaqmx_example.py")
NUMBER = r"-?\d+\.\d+"
# Generous: under `with-load 2` on a shared 2-core machine, starting Python with nidaqmx and gRPC took up to
# 30 s and `uartlab twin up` 35 s; on an idle machine each example takes about a second.
START_S = 120.0


@dataclass
class TwinProcess:
    address: str
    cwd: Path


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    """`uartlab twin up` on free ports, in a folder of its own; stopped with Ctrl+C (SIGINT) at the end."""
    cwd = tmp_path_factory.mktemp("twin")
    proc = subprocess.Popen([sys.executable, "-m", "uartlab.app.cli", "twin", "up", "--ephemeral-ports"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(START_S, proc.kill)  # a twin that never says where it listens fails the fixture
    watchdog.start()
    lines = []
    for line in proc.stdout:   # type: ignore[union-attr]
        lines.append(line)
        if match := re.search(r"USB-6210.*?(\d+\.\d+\.\d+\.\d+:\d+)", line):
            break
    watchdog.cancel()
    assert match, "uartlab twin up did not print the DAQ's address:\n" + "".join(lines)
    try:
        yield TwinProcess(match[1], cwd)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Example:
    """One example program running against the twin; its output read as it comes (unbuffered)."""

    def __init__(self, twin: TwinProcess, name: str):
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}  # Agg: plot.show() returns at once
        self.proc = subprocess.Popen([sys.executable, str(RUNNER), twin.address, str(EXAMPLES / name)],
                                     cwd=twin.cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.stdout = self.stderr = ""
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(name,), daemon=True)
                         for name in ("stdout", "stderr")]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str) -> None:
        stream = getattr(self.proc, name)
        while chunk := stream.read(1):
            with self._changed:
                setattr(self, name, getattr(self, name) + chunk)
                self._changed.notify_all()

    def wait_for_output(self, pattern: str, timeout_s: float = START_S) -> re.Match:
        with self._changed:
            self._changed.wait_for(lambda: re.search(pattern, self.stdout) or self.proc.poll() is not None,
                                   timeout_s)
            match = re.search(pattern, self.stdout)
        if match is None:
            self.finish(timeout_s=1.0)
            pytest.fail(f"no {pattern!r} in the example's output:\n{self.stdout}\n{self.stderr}")
        return match

    def press_enter(self) -> None:
        self.proc.stdin.write("\n")   # type: ignore[union-attr]
        self.proc.stdin.flush()   # type: ignore[union-attr]

    def finish(self, timeout_s: float = START_S) -> tuple[int, str]:
        """(exit code, stderr) once the program ends (killed after timeout_s); all its stdout is in ``stdout``."""
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGUSR1)   # where it hangs, every thread's stack, into its stderr
            time.sleep(1.0)
            self.proc.kill()
            self.proc.wait()
        for reader in self._readers:
            reader.join(timeout=5)
        return self.proc.returncode, self.stderr


def run_to_end(twin: TwinProcess, name: str) -> str:
    example = Example(twin, name)
    code, stderr = example.finish()
    assert code == 0, f"{name} failed:\n{example.stdout}\n{stderr}"
    return example.stdout


def fails_with(twin: TwinProcess, name: str) -> str:
    """An example that NI-DAQmx on a USB-6210 stops with an error: its stderr (nidaqmx's DaqError)."""
    code, stderr = Example(twin, name).finish()
    assert code != 0, f"{name} should have failed"
    return stderr


@pytest.fixture(scope="module")
def ai0_V(twin) -> float:
    """ai0 as the examples configure it (default terminal: DIFF, ai0 - ai8), read by our own client."""
    channel = grpc.insecure_channel(twin.address)
    with nidaqmx.Task(grpc_options=nidaqmx.GrpcSessionOptions(channel, "")) as task:
        chan = task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
        assert chan.ai_term_cfg == TerminalConfiguration.DIFF
        task.timing.cfg_samp_clk_timing(1000.0, sample_mode=AcquisitionType.FINITE, samps_per_chan=200)
        data = np.array(task.read(200))
    channel.close()
    assert 0.0 < data.mean() < 5.0 and data.std() > 0   # a pot's volts, with the noise of a real ADC
    return float(data.mean())


NOISE_V = 0.01   # the plant's noise and drift between two reads of an idle rig are a few mV


def values(text: str) -> np.ndarray:
    return np.array([float(v) for v in re.findall(NUMBER, text)])


# ------------------------------------------------------------ finite and on-demand reads
def test_voltage_sample_reads_one_value_on_demand(twin, ai0_V):
    out = run_to_end(twin, "analog_in/voltage_sample.py")
    assert float(re.fullmatch(rf"Acquired data: ({NUMBER})\n", out)[1]) == pytest.approx(ai0_V, abs=NOISE_V)


@pytest.mark.parametrize("name", ["analog_in/voltage_acq_int_clk.py", "analog_in/voltage_acq_int_clk_plot_data.py"])
def test_finite_acquisition_reads_50_samples(twin, ai0_V, name):
    out = run_to_end(twin, name)
    if "plot" in name:
        return   # the plot goes to Agg: completing is the check
    data = values(out)
    assert len(data) == 50 and data.mean() == pytest.approx(ai0_V, abs=NOISE_V) and data.std() > 0


def test_waveform_read_carries_t0_dt_channel_name_and_units(twin, ai0_V):
    before = datetime.now(UTC)
    out = run_to_end(twin, "analog_in/voltage_acq_int_clk_wfm.py")
    data = values(out.split("Channel name")[0].split("[", 1)[1])
    assert len(data) == 50 and data.mean() == pytest.approx(ai0_V, abs=NOISE_V)
    assert "Channel name: Dev1/ai0\n" in out and "Units: Volts\n" in out and "dt: 0:00:00.001000\n" in out
    t0 = datetime.fromisoformat(re.search(r"t0: (\S+ \S{8}\.\d{6})\d*\+00:00", out)[1]).replace(tzinfo=UTC)
    assert -1.0 < (t0 - before).total_seconds() < 30.0   # the first sample's time, on the wall clock


def test_waveform_plot_example_completes(twin):
    run_to_end(twin, "analog_in/voltage_acq_int_clk_plot_wfm.py")


def test_tdms_logging_writes_the_file_the_example_reads_back(twin, ai0_V):
    out = run_to_end(twin, "analog_in/voltage_acq_int_clk_tdms_logging.py")
    data = values(re.fullmatch(r"Read data from TDMS file: \[(.*)\]\n", out)[1])
    assert len(data) == 10 and data.mean() == pytest.approx(ai0_V, abs=NOISE_V)
    assert not (twin.cwd / "TestData.tdms").exists()   # the example removed what the twin wrote


def test_channel_properties_coerce_to_the_6210_ranges(twin):
    out = run_to_end(twin, "channel_properties.py")
    # +-0.1 V asked: the 6210's +-0.2 V range; ai_max = 5: +-5 V; ai1:3 at +-10 V leave ai0 alone.
    assert out.split() == ["0.2", "-0.2", "5.0", "-5.0", "10.0", "-10.0", "5.0", "-5.0", "Dev1/ai2"]


def test_system_properties_show_the_usb_6210(twin):
    out = run_to_end(twin, "system_properties.py")
    assert re.match(r"DAQmx \d+\.\d+\.\d+\n", out)
    assert "Device Name: Dev1, Product Category: ProductCategory.M_SERIES_DAQ, Product Type: USB-6210" in out


# ------------------------------------------------------------ continuous acquisitions, stopped by the user
def test_continuous_acquisition_runs_until_ctrl_c(twin):
    example = Example(twin, "analog_in/cont_voltage_acq_int_clk.py")
    example.wait_for_output(r"Total 2000\.")
    example.proc.send_signal(signal.SIGINT)
    code, stderr = example.finish()
    assert code == 0, f"exit {code} after Ctrl+C:\n{example.stdout}\n{stderr}"
    total = int(re.search(r"\nAcquired (\d+) total samples\.\n", example.stdout)[1])
    assert total >= 2000 and total % 1000 == 0


@pytest.mark.parametrize("name, done", [
    ("analog_in/cont_voltage_acq_int_clk_every_n_samples_event.py", r"Total 2000\."),
    ("every_n_samples_event.py", r"(Every N Samples callback invoked\.\n){3}"),  # printed before each read
])
def test_every_n_samples_events_until_enter(twin, name, done):
    example = Example(twin, name)
    example.wait_for_output(done)
    example.press_enter()
    code, stderr = example.finish()
    assert code == 0, f"exit {code} after Ctrl+C:\n{example.stdout}\n{stderr}"
    total = int(re.findall(r"(\d+)(?: total samples\.)?\n", example.stdout)[-1])
    assert total >= 2000 and total % 1000 == 0


def test_a_start_trigger_on_pfi0_that_never_comes_acquires_nothing(twin):
    """Nothing drives the twin's PFI0, as on a board with nothing wired to it: no samples, no events."""
    example = Example(twin, "analog_in/cont_voltage_acq_int_clk_dig_start.py")
    example.wait_for_output("Press Enter to stop.")
    time.sleep(1.5)   # 1.5 events' worth at 1 kS/s, had the acquisition started
    example.press_enter()
    code, stderr = example.finish()
    assert code == 0, stderr
    assert example.stdout.endswith("\nAcquired 0 total samples.\n")


# ------------------------------------------------------------ what a USB-6210 does not have: NI's own errors
def test_ao0_does_not_exist_on_a_usb_6210(twin):
    stderr = fails_with(twin, "nidaqmx_warnings.py")
    assert "nidaqmx.errors.DaqError: Physical channel specified does not exist on this device." in stderr
    assert "Physical Channel: ao0" in stderr and "Status Code: -200170" in stderr
    assert "UNIMPLEMENTED" not in stderr


def test_a_cdaq_module_is_not_this_system_s_device(twin):
    stderr = fails_with(twin, "analog_in/ai_raw.py")   # written for a CompactDAQ chassis: cDAQ1Mod1/ai0
    assert "Device identifier is invalid." in stderr and "Status Code: -200220" in stderr


@pytest.mark.parametrize("name", ["analog_in/voltage_acq_int_clk_dig_ref.py",
                                  "analog_in/voltage_acq_int_clk_dig_start_ref.py"])
def test_a_trigger_on_pfi8_is_refused_as_ni_does(twin, name):
    """The 6210's trigger inputs are PFI0-3; the examples' PFI8 is a terminal the board lacks."""
    stderr = fails_with(twin, name)
    assert "Source terminal to be routed could not be found on the device." in stderr
    assert "Source Terminal: /Dev1/PFI8" in stderr and "Status Code: -89120" in stderr
