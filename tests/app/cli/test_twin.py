"""`uartlab twin up` as an operator runs it: it prints every endpoint and stops cleanly on Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

CMD = [sys.executable, "-m", "uartlab.app.cli", "twin", "up", "--ephemeral-ports"]


def test_twin_up_prints_where_each_twin_listens_and_stops_on_ctrl_c():
    proc = subprocess.Popen([*CMD, "--speed", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C to stop"):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    text = "".join(lines) + out
    assert proc.returncode == 0, err
    assert "/dev/pts/" in text and "NI-DAQmx gRPC" in text and "127.0.0.1:" in text
    assert "NatNet 4.1" in text and "command" in text and "data" in text
    assert "twin rig stopped." in text


def test_bad_speed_is_one_clear_error():
    proc = subprocess.run([*CMD, "--speed", "0"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--speed: must be > 0" in proc.stderr and "Traceback" not in proc.stderr


def test_twin_up_json_is_one_line_of_endpoints_for_a_parent_then_the_control_channel_answers():
    from uartlab.app.rig.twin_control import TwinControl

    proc = subprocess.Popen([*CMD, "--json", "--duration", "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        endpoints = json.loads(proc.stdout.readline())
        assert set(endpoints) == {"pid", "bus_port", "bus_url", "dxl_protocol", "servo_ids", "daq_address",
                                  "daq_device", "natnet_address", "natnet_command_port", "natnet_data_port",
                                  "control"}
        assert endpoints["bus_url"].startswith("socket://127.0.0.1:")
        assert endpoints["pid"] == proc.pid and endpoints["bus_port"].startswith("/dev/pts/")
        control = TwinControl(endpoints["control"])
        assert control.call("ping") == "pong" and len(control.call("servos")) == 6
        control.close()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out == "" and "twin rig stopped." in err   # stdout: the one line only


def test_a_spare_given_no_argument_list_is_one_clear_error():
    proc = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "twin", "spare"], input="--speed 2\n",
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("uartlab twin spare: stdin must be one JSON list of `twin up` arguments, "
                                   "got '--speed 2\\n'")
