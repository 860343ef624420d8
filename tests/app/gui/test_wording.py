"""The window's words for the core's sentences (app/gui/wording.py), fed what the producers really say: the
interlocks' trip reasons, the steady state's JSON, the recorder's and the live model's drop counts."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from uartlab.app.gui.wording import drops_sentence, for_operator, steady_sentence
from uartlab.app.run.state import SteadyState
from uartlab.protocols.interlocks import InterlockLimits, Interlocks, Observation
from uartlab.protocols.suite import builtin_suite


def trip_reason(**observed) -> str:
    interlocks = Interlocks(InterlockLimits.from_suite(builtin_suite("free_motion").limits))
    obs = Observation(**{"tendon_force_N": np.full(6, 1.0), "excursion_m": np.zeros(6), **observed})
    trip = interlocks.check(obs)
    assert trip is not None
    return trip.reason


def test_a_stale_stream_names_the_device_and_what_to_check():
    reason = trip_reason(stream_age_s={"daq": 2.5, "actuators": 0.0, "mocap": 0.0, "joints": 0.0})
    real, twin = for_operator(reason, twin=False), for_operator(reason, twin=True)
    assert real.text.startswith("the DAQ (USB-6210) sent nothing for 2.5 s") and "USB cable" in real.next_step
    assert "twin rig" in twin.text and "USB cable" not in twin.next_step   # a twin has no cable to check


def test_a_servo_hardware_error_is_said_by_name_not_by_bits():
    reason = trip_reason(hardware_error=np.array([0, 0, 0, 0x20, 0, 0]))
    said = for_operator(reason)
    assert said.text == "servo DI shut itself down: overload" and "0x" not in said.text
    assert "power off and on" in said.next_step
    assert for_operator(reason, twin=True).text.startswith("servo DI of the twin rig")


def test_what_no_rule_knows_is_left_as_it_came():
    reason = trip_reason(tendon_force_N=np.array([50.0, 1, 1, 1, 1, 1]))
    assert "over the limit" in reason and for_operator(reason) is None


def test_a_steady_state_is_one_readable_line():
    steady = SteadyState("free/FDP", 2, "settled", 0.74, np.array([0.1, 39.0, 57.8, 31.9]),
                         np.array([2.54, 0.0, 4.01, 0.37, 0.6, 0.4]), np.zeros(3))
    line = steady_sentence(json.dumps(steady.to_dict()))
    assert line.startswith("free/FDP repeat 2: settled after 0.74 s — MCP_AB 0.1°, MCP_FE 39.0°")
    assert "{" not in line and "FDP 2.54" in line


def test_drop_counts_speak_only_when_something_was_lost():
    assert drops_sentence(json.dumps({"daq": 0, "mocap": 0})) is None
    assert drops_sentence(json.dumps({"daq": 3, "mocap": 0})) == "samples lost: daq 3"
    model = {"runner_ticks": 658, "model_samples": 546, "ticks_dropped_from_queue": 0, "records_not_sent": 0}
    assert drops_sentence(json.dumps(model)) is None
    assert drops_sentence(json.dumps({**model, "records_not_sent": 4})) == "samples lost: records not sent 4"


def test_a_device_failure_behind_which_the_twin_process_died_says_the_twin_went_not_a_cable():
    from uartlab.app.rig.twin_process import TwinProcess

    twin = TwinProcess([])   # the sentence as the rig writes it for a twin process killed -9
    twin.process = subprocess.Popen([sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"])
    ended = twin.ended(wait_s=30.0)
    error = f"SerialException: read failed: [Errno 104] Connection reset by peer ({ended})"
    said = for_operator(error, twin=True)
    assert said.text == "the twin rig's process was killed by SIGKILL: its servos, DAQ and motion capture are gone"
    assert said.next_step == "Disconnect and Connect to start a new twin rig"      # the window's own core
    elsewhere = for_operator(error, twin=True, own_core=False)   # a core's twin lives and dies with the core
    assert elsewhere.next_step.startswith("restart `uartlab rig serve`") and "cable" not in elsewhere.next_step


def test_a_rig_core_gone_is_said_with_the_next_step_for_whoever_started_it():
    from uartlab.processes import how_it_ended

    mine = for_operator(f"the rig core this window started (pid 7) {how_it_ended(-9)}")
    assert mine.text.startswith("the rig core was killed by SIGKILL: the servos' Bus Watchdog stops them")
    assert mine.next_step == "Disconnect and Connect to start a new rig core"
    elsewhere = for_operator("the rig core (pid 7) has exited")
    assert elsewhere.text.startswith("the rig core has exited") and "uartlab rig serve" in elsewhere.next_step
