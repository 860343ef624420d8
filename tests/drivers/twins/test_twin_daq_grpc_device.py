"""NI grpc-device's own Python example (tests/vendor/ni_grpc_device/, unmodified) against the USB-6210 twin.

The example talks to the raw NiDAQmx gRPC service as NI's C++ server exposes it, without the nidaqmx
package; it runs in its own process (run_grpc_device_example.py gives it nidaqmx's bundled stubs). The twin
runs here, 10x faster than real time: the example's finite 1000 samples at 100 S/s take 1 s.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from uartlab.drivers.twins.daq_grpc import DaqTwin

EXAMPLES = Path(__file__).parents[2] / "vendor" / "ni_grpc_device" / "examples" / "nidaqmx"
RUNNER = Path(__file__).with_name("run_grpc_device_example.py")


@pytest.fixture(scope="module")
def fast_twin(daq_plant):
    with DaqTwin(daq_plant, time_scale=10.0) as twin:
        yield twin


def test_analog_input_every_n_samples_reads_until_done(fast_twin):
    """It registers a done event beside its every-N event and reads 10 blocks of 100 samples; the twin once
    answered the done event with -209876 (function not supported), which a USB-6210 supports."""
    host, port = fast_twin.address.rsplit(":", 1)
    result = subprocess.run([sys.executable, str(RUNNER), str(EXAMPLES / "analog-input-every-n-samples.py"),
                             host, port, "Dev1/ai6"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and not result.stderr, result.stderr
    assert re.findall(r"Acquired (\d+) samples \((\d+) samples per channel\)", result.stdout) == [("100", "100")] * 10
    # ai6 senses the pots' +5 V reference
    first = [float(v) for v in re.findall(r"Read Data: \[(.*?)\]", result.stdout)[0].split(",")]
    assert len(first) == 10 and all(4.9 < v < 5.1 for v in first), result.stdout
