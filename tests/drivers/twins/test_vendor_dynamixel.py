"""ROBOTIS' own DynamixelSDK Python examples (tests/vendor/dynamixel_sdk/, byte-for-byte upstream) run against
the MX-64 bus twin, as a user at the rig would run them.

How an example is run (the harness):
- The example's text is upstream's; only the constants a user edits before running it on this rig are
  replaced, each assignment line of those names and nothing else (``user_edits`` checks that): the port
  (DEVICENAME = the twin's pty), MY_DXL = 'MX_SERIES' where the example asks for the model, and on
  Protocol 1.0 the MX-64's own control-table addresses (upstream's 1.0 examples carry the X series' table,
  and say "Control table address is different in Dynamixel model"). Baud rates and IDs stay upstream's:
  the twin's servos have IDs 1..6 and a pty takes any baud rate. There is no way around a text edit: the
  SDK reads the port name only from the PortHandler argument the example hard-codes.
- The edited file runs in its own interpreter (``python file``), so the SDK busy-waits in its own process
  as on a lab PC, at nice -10 where allowed: the SDK reads, then checks its clock, so a preemption between
  the two longer than its packet timeout reads as "There is no status packet!" although the answer is
  there (seen on this machine at load 25 while the twin's slowest answer was 3.6 ms). Its stdin is a
  pseudo-terminal, because the examples' getch() puts stdin in raw mode (termios fails on a pipe).
  The harness types a key when the example waits for one, as a user does (``Example.press``).
- The twin (plant in real time on a PlantClock + DxlBusTwin) runs in this process, with the test heap
  frozen (the ``realtime`` marker), so a garbage-collection pass of the test process cannot stall it; its
  threads run SCHED_FIFO where the OS allows (drivers/twins/realtime.py).
Each example must finish by itself with exit status 0, print no "[TxRxResult]"/"[RxPacketError]" line (a
missed SDK timeout or an error status packet), and show the values a real MX-64 gives.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from uartlab.drivers import mx64
from uartlab.drivers.twins.dxl_bus import DxlBusTwin
from uartlab.drivers.twins.plant import Plant, PlantClock, PlantConfig

pytestmark = pytest.mark.realtime

EXAMPLES = Path(__file__).parents[2] / "vendor" / "dynamixel_sdk"
ESC, ANY_KEY, SPACE = "\x1b", "a", " "
PROMPT = "Press any key"
RUN_TIMEOUT_S = 60.0
SDK_PROBLEM = re.compile(r"\[TxRxResult\]|\[RxPacketError\]|failed|Failed")

_P1 = mx64.CONTROL_TABLE_P1
# What an MX-64 (1.0) user sets in upstream's 1.0 examples: the legacy table's addresses, and the sizes the
# examples read with (their goal writes are 4 bytes whatever the constant says, which on the MX-64 also
# writes Moving Speed 0 = the motor's own maximum speed).
MX64_P1_TABLE = {
    "ADDR_MX_TORQUE_ENABLE": _P1["Torque Enable"].address,
    "ADDR_MX_GOAL_POSITION": _P1["Goal Position"].address,
    "ADDR_MX_PRESENT_POSITION": _P1["Present Position"].address,
    "ADDR_MX_MOVING": _P1["Moving"].address,
    "ADDR_MX_BAUDRATE": _P1["Baud Rate"].address,
    "LEN_MX_PRESENT_POSITION": _P1["Present Position"].size,
    "LEN_MX_MOVING": _P1["Moving"].size,
}


def assigned(source: str, name: str) -> bool:
    return re.search(rf"^\s*{name}\s*=", source, re.M) is not None


def user_edits(source: str, values: dict[str, object]) -> str:
    """The example with each named constant's assignment lines set to ``values`` (repr), nothing else."""
    edited = source
    for name, value in values.items():
        pattern = re.compile(rf"^(\s*{name}\s*)=.*$", re.M)
        edited, n = pattern.subn(lambda m, v=value: f"{m.group(1)}= {v!r}", edited)
        assert n, f"the example assigns no {name}: upstream changed, check the harness"
    changed = [(a, b) for a, b in zip(source.splitlines(), edited.splitlines(), strict=True) if a != b]
    assert all(re.match(rf"\s*({'|'.join(values)})\s*=", a) for a, _ in changed), changed
    return edited


class Example:
    """One vendor example running in its own interpreter with a pty as its keyboard."""

    def __init__(self, relative: str, tmp_path: Path, values: dict[str, object], table: dict[str, int]):
        source = (EXAMPLES / relative).read_text()
        values = {**values, **{name: v for name, v in table.items() if assigned(source, name)}}
        script = tmp_path / Path(relative).name
        script.write_text(user_edits(source, values))
        # A cooked terminal, as a user's shell leaves it; the harness keeps the slave open to watch its mode.
        self._keyboard, self._terminal = os.openpty()
        self.proc = subprocess.Popen(["nice", "-n", "-10", sys.executable, str(script)], stdin=self._terminal,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.output = ""
        self._seen = 0  # where the next wait_for looks from
        self._deadline = time.monotonic() + RUN_TIMEOUT_S

    def _read(self, timeout_s: float) -> bool:
        """Take what the example has printed (waiting up to timeout_s for something); False at its end."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        if not ready:
            return True
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        self.output += chunk.decode(errors="replace")
        return bool(chunk)

    def _drain(self) -> bool:
        while select.select([self.proc.stdout], [], [], 0)[0]:
            if not self._read(0):
                return False
        return True

    def wait_for(self, text: str) -> None:
        while text not in self.output[self._seen:]:
            assert time.monotonic() < self._deadline, f"never printed {text!r}:\n{self.output}"
            assert self._read(0.1), f"ended before printing {text!r}:\n{self.output}"
        self._seen = self.output.index(text, self._seen) + len(text)

    def wait_until_position_above(self, ticks: int) -> None:
        """Until a "PresPos:N" reading above ``ticks`` appears (clear_multi_turn prints them on one line)."""
        while not any(int(v) > ticks for v in re.findall(r"PresPos:(-?\d+)", self.output[self._seen:])):
            assert time.monotonic() < self._deadline, f"never passed {ticks}:\n{self.output}"
            assert self._read(0.02), f"ended before passing {ticks}:\n{self.output}"

    def _reading_keys(self) -> bool:
        """The examples' getch()/kbhit() take the terminal out of canonical mode while they wait for a key."""
        return not termios.tcgetattr(self._terminal)[3] & termios.ICANON

    def press(self, key: str, then: str | None) -> None:
        """Type ``key`` once the example reads the keyboard, until it prints ``then`` (None: until it ends).

        getch() calls tty.setraw, whose TCSAFLUSH drops whatever was typed before it: a key typed too early
        is lost, on a real keyboard too. So the harness types only while the terminal is raw, and again if the
        example did not react.
        """
        while True:
            running = self._drain()
            if then is None and not running:
                return
            if then is not None and then in self.output[self._seen:]:
                self._seen = self.output.index(then, self._seen) + len(then)
                return
            assert running, f"ended before printing {then!r}:\n{self.output}"
            assert time.monotonic() < self._deadline, f"no reaction to {key!r}:\n{self.output}"
            if self._reading_keys():
                os.write(self._keyboard, key.encode())
                self._read(0.05)  # a retype is harmless: ``then`` is printed before the next key is read
            else:
                time.sleep(0.005)

    def type_ahead(self, key: str, then: str) -> None:
        """Type ``key`` once, now, for a loop that polls with kbhit() and reads with a getch() that keeps the
        queue (clear_multi_turn): the key waits in the terminal until the loop takes it, as a user's does.
        Waiting for the loop's brief non-canonical window instead lost seconds under load while the servo
        kept winding the tendon."""
        os.write(self._keyboard, key.encode())
        self.wait_for(then)

    def finish(self) -> str:
        """Read to the end; the example must exit 0 by itself and report no SDK or status-packet error."""
        while self._read(0.1):
            assert time.monotonic() < self._deadline, f"did not finish:\n{self.output}"
        code = self.proc.wait(timeout=5)
        assert code == 0, f"exit status {code}:\n{self.output}"
        assert not SDK_PROBLEM.search(self.output), self.output
        return self.output

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._keyboard, self._terminal):
            os.close(fd)


@pytest.fixture
def example(tmp_path):
    started: list[Example] = []

    def start(relative: str, table: dict[str, int] | None = None, **values) -> Example:
        started.append(Example(relative, tmp_path, values, table or {}))
        return started[-1]

    yield start
    for ex in started:
        ex.close()


def _twin(protocol: float):
    plant = Plant(PlantConfig())
    clock = PlantClock(plant).start()
    bus = DxlBusTwin(plant, protocol=protocol).start()
    return plant, clock, bus


def _stop(clock: PlantClock, bus: DxlBusTwin) -> None:
    bus.stop()
    clock.stop()
    # Shown when a test fails: whether a missed SDK timeout was the twin's (slowest answer) or the client's.
    print(f"bus twin: {bus.stats}, real-time thread: {bus.realtime}, plant lag {clock.lag_s * 1e3:.1f} ms")


@pytest.fixture
def bus2():
    _, clock, bus = _twin(2.0)
    yield bus
    _stop(clock, bus)


@pytest.fixture
def bus1():
    _, clock, bus = _twin(1.0)
    yield bus
    _stop(clock, bus)


def positions(output: str, pattern: str) -> list[int]:
    return [int(v) for v in re.findall(pattern, output)]


def back_and_forth(ex: Example, moves: int = 2, reading: str = "[ID:") -> str:
    """The examples' main loop: a key moves to the next goal and prints readings until there; ESC ends."""
    for _ in range(moves):
        ex.wait_for(PROMPT)
        ex.press(ANY_KEY, then=reading)
    ex.wait_for(PROMPT)
    ex.press(ESC, then=None)
    return ex.finish()


# ------------------------------------------------------------------ Protocol 2.0
def test_p2_ping(example, bus2):
    out = example("protocol2_0/ping.py", DEVICENAME=bus2.port).finish()
    assert f"[ID:001] ping Succeeded. Dynamixel model number : {mx64.MODEL_NUMBER_P2}" in out


def test_p2_broadcast_ping(example, bus2):
    out = example("protocol2_0/broadcast_ping.py", DEVICENAME=bus2.port).finish()
    found = re.findall(r"\[ID:(\d+)\] model version : (\d+) \| firmware version : (\d+)", out)
    assert [(int(i), int(m), int(f)) for i, m, f in found] == \
        [(i, mx64.MODEL_NUMBER_P2, mx64.FIRMWARE_VERSION_P2) for i in range(1, 7)]


def test_p2_read_write(example, bus2):
    out = back_and_forth(example("protocol2_0/read_write.py", DEVICENAME=bus2.port, MY_DXL="MX_SERIES"))
    final = re.findall(r"GoalPos:(\d+)  PresPos:(-?\d+)", out)
    reached = {int(g): int(p) for g, p in final}  # the last reading of each goal is where the loop stopped
    assert set(reached) == {0, 4095} and all(abs(g - p) <= 20 for g, p in reached.items()), out


def test_p2_sync_read_write(example, bus2):
    out = back_and_forth(example("protocol2_0/sync_read_write.py", DEVICENAME=bus2.port, MY_DXL="MX_SERIES"))
    last = re.findall(r"\[ID:001\] GoalPos:(\d+)  PresPos:(-?\d+)\t\[ID:002\] GoalPos:(\d+)  PresPos:(-?\d+)", out)
    assert last, out
    # The example leaves its loop once either servo is within its 20-count threshold.
    g1, p1, g2, p2 = map(int, last[-1])
    assert min(abs(g1 - p1), abs(g2 - p2)) <= 20, out


def test_p2_bulk_read_write(example, bus2):
    out = back_and_forth(example("protocol2_0/bulk_read_write.py", DEVICENAME=bus2.port, MY_DXL="MX_SERIES"))
    assert "[ID:001] Present Position" in out or "PresPos" in out, out


def test_p2_indirect_address(example, bus2):
    out = back_and_forth(example("protocol2_0/indirect_address.py", DEVICENAME=bus2.port, MY_DXL="MX_SERIES"))
    readings = re.findall(r"GoalPos:(\d+)  PresPos:(-?\d+)  IsMoving:(\d)", out)
    reached = {int(g): (int(p), int(m)) for g, p, m in readings}
    assert set(reached) == {0, 4095} and all(abs(g - p) <= 20 for g, (p, _) in reached.items()), out
    assert any(int(m) for _, _, m in readings), "the indirect Moving byte never showed the servo moving"
    assert bus2.value(1, "LED") == 1  # the second goal's indirect write set LED (65) through Indirect Data 5


def test_p2_reboot(example, bus2):
    ex = example("protocol2_0/reboot.py", DEVICENAME=bus2.port)
    ex.wait_for("Press any key to reboot")
    ex.press(ANY_KEY, then="See the Dynamixel LED flickering")
    assert "[ID:001] reboot Succeeded" in ex.finish()


def test_p2_factory_reset(example, bus2):
    out = example("protocol2_0/factory_reset.py", DEVICENAME=bus2.port, MY_DXL="MX_SERIES").finish()
    assert "[ID:001] factoryReset Success!" in out and "[ID:001] Set Dynamixel baudnum to : 1" in out


def test_p2_clear_multi_turn(example, bus2):
    ex = example("protocol2_0/clear_multi_turn.py", DEVICENAME=bus2.port, MY_DXL="MX_SERIES")
    ex.wait_for(PROMPT)
    ex.press(ANY_KEY, then="Press SPACE key")
    # Past one revolution, then stop: the spool pulls the tendon, and the 256 turns the example asks for
    # would overload the SEA long before (the twin's servos are on the finger, not on a bench).
    ex.wait_until_position_above(mx64.TICKS_PER_REV + 50)
    ex.type_ahead(SPACE, then="Stop & Clear Multi-Turn Information!")
    ex.wait_for("Present Position has been reset. : ")
    ex.wait_for(PROMPT)
    ex.press(ESC, then=None)
    out = ex.finish()
    turned = positions(out, r"PresPos:(-?\d+)")
    reset = positions(out, r"Present Position has been reset\. : (-?\d+)")
    assert max(turned) > mx64.TICKS_PER_REV, out
    assert len(reset) == 1 and 0 <= reset[0] < mx64.TICKS_PER_REV, out


def test_p2_multi_port(example, bus2):
    _, clock, other = _twin(2.0)
    try:
        out = back_and_forth(example("protocol2_0/multi_port.py", DEVICENAME1=bus2.port, DEVICENAME2=other.port,
                                     MY_DXL="MX_SERIES"))
    finally:
        _stop(clock, other)
    assert "[ID:001] GoalPos" in out and "[ID:002] GoalPos" in out, out


# ------------------------------------------------------------------ Protocol 1.0 (MX-64 firmware 1.0 table)
def test_p1_ping(example, bus1):
    out = example("protocol1_0/ping.py", DEVICENAME=bus1.port).finish()
    assert f"[ID:001] ping Succeeded. Dynamixel model number : {mx64.MODEL_NUMBER_P1}" in out


def test_p1_read_write(example, bus1):
    out = back_and_forth(example("protocol1_0/read_write.py", DEVICENAME=bus1.port, table=MX64_P1_TABLE))
    reached = {int(g): int(p) for g, p in re.findall(r"GoalPos:(\d+)  PresPos:(-?\d+)", out)}
    assert set(reached) == {10, 4000} and all(abs(g - p) <= 20 for g, p in reached.items()), out


def test_p1_sync_write(example, bus1):
    out = back_and_forth(example("protocol1_0/sync_write.py", DEVICENAME=bus1.port, table=MX64_P1_TABLE))
    assert "[ID:001] GoalPos" in out, out
