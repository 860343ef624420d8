"""`uartlab bench bus`: the MX-64 control loop (one sync write + one read per tick) against the bus twin.

The achieved loop rate is printed next to the wire-time limit of a real 1 Mbps bus: the bytes one tick puts
on the wire (the sync write, the read instruction and six status packets) x 10 bits per byte (8N1) over the
baud rate, plus six return delays. Goals: >= 200 Hz, and >= 50 % of that wire limit. The twin's
pseudo-terminal has no baud rate, so here the loop is CPU-bound (SDK + twin in one process), not wire-bound:
the real bus caps the loop at the wire limit, the twin measures the host-side overhead on top of it.
"""

from __future__ import annotations

import json
import time

import numpy as np
from uartlab.drivers import mx64
from uartlab.drivers.mx64_bus import Mx64Bus
from uartlab.drivers.twins.dxl_bus import DxlBusTwin
from uartlab.drivers.twins.plant import Plant, PlantClock, PlantConfig

GOAL_RATE_HZ = 200.0          # the SEA control loop
GOAL_WIRE_FRACTION = 0.5      # at least half of what the wire allows
BAUD = 1_000_000              # the rig's bus rate (device-notes section 1: 1 Mbps)
BITS_PER_BYTE = 10            # 8N1: start + 8 data + stop
N_SERVOS = 6
AMPLITUDE_M, FREQUENCY_HZ = 0.002, 1.0  # a gentle tendon sine so every tick commands something new


def wire_bytes_per_tick(protocol: float, read_length: int) -> dict[str, int]:
    """Bytes of one control tick on the wire (without byte stuffing, which is rare for these values)."""
    goal_size = mx64.control_table(protocol)["Goal Position"].size
    if protocol == 1.0:
        write = 8 + N_SERVOS * (1 + goal_size)   # FF FF ID LEN INST ADDR L {id data} CHK
        read = 7 + 3 * N_SERVOS                  # FF FF ID LEN INST 00 {len id addr} CHK (Bulk Read)
        status = 6 + read_length                 # FF FF ID LEN ERR data CHK
    else:
        write = 14 + N_SERVOS * (1 + goal_size)  # header 4, ID, LEN 2, INST, ADDR 2, L 2, {id data}, CRC 2
        read = 14 + N_SERVOS                     # the same with one ID per servo (Sync Read)
        status = 11 + read_length                # header 4, ID, LEN 2, INST, ERR, data, CRC 2
    return {"sync_write": write, "read_instruction": read, "status_each": status,
            "total": write + read + N_SERVOS * status}


def measure(seconds: float = 3.0, protocol: float = 2.0) -> dict:
    plant = Plant(PlantConfig())
    clock = PlantClock(plant).start()  # the physics runs live, as it would under the real rig
    twin = DxlBusTwin(plant, protocol=protocol, return_delay_us=0).start()  # 0: what the driver sets
    bus = Mx64Bus(twin.port, protocol=protocol, baud=BAUD)
    try:
        bus.connect()
        bus.enable()
        periods = []
        start = last = time.perf_counter()
        while last - start < seconds:
            phase = 2 * np.pi * FREQUENCY_HZ * (last - start)
            bus.command(np.full(N_SERVOS, AMPLITUDE_M * np.sin(phase)))
            bus.read()
            now = time.perf_counter()
            periods.append(now - last)
            last = now
        stats = bus.stats
    finally:
        bus.close()
        twin.stop()
        clock.stop()
    period = np.asarray(periods)
    wire = wire_bytes_per_tick(protocol, bus.read_length)
    return_delay_us = 0.0
    wire_s = wire["total"] * BITS_PER_BYTE / BAUD + N_SERVOS * return_delay_us * 1e-6
    rate_hz = len(period) / float(period.sum())
    return {
        "protocol": protocol,
        "seconds": float(period.sum()),
        "ticks": len(period),
        "rate_hz": rate_hz,
        "period_median_ms": float(np.median(period) * 1e3),
        "period_p99_ms": float(np.percentile(period, 99) * 1e3),
        "period_max_ms": float(period.max() * 1e3),
        "wire_bytes_per_tick": wire,
        "read_block_bytes": bus.read_length,
        "baud": BAUD,
        "return_delay_us": return_delay_us,
        "wire_time_per_tick_ms": wire_s * 1e3,
        "wire_limit_hz": 1.0 / wire_s,
        "ratio_to_wire_limit": rate_hz * wire_s,
        "retries": stats.retries, "timeouts": stats.timeouts, "corrupt": stats.corrupt,
        "meets_rate_goal": rate_hz >= GOAL_RATE_HZ,
        "meets_wire_goal": rate_hz * wire_s >= GOAL_WIRE_FRACTION,
    }


def render(m: dict) -> str:
    def verdict(ok: bool) -> str:
        return "meets goal" if ok else "MISSES goal"

    w = m["wire_bytes_per_tick"]
    read_kind = "bulk read" if m["protocol"] == 1.0 else "sync read"
    return "\n".join([
        f"uartlab bench bus — MX-64 x{N_SERVOS} on the bus twin, Protocol {m['protocol']:.1f}, {m['seconds']:.1f} s",
        f"  per tick on the wire: sync write {w['sync_write']} B + {read_kind} {w['read_instruction']} B"
        f" + {N_SERVOS} x status {w['status_each']} B ({m['read_block_bytes']} B of data each) = {w['total']} B",
        f"  wire limit at {m['baud'] / 1e6:g} Mbps: {m['wire_time_per_tick_ms']:.2f} ms/tick"
        f" (+ return delays {m['return_delay_us']:g} us) -> {m['wire_limit_hz']:.0f} Hz",
        f"  achieved: {m['rate_hz']:.0f} Hz over {m['ticks']} ticks (median {m['period_median_ms']:.2f} ms,"
        f" p99 {m['period_p99_ms']:.2f} ms, max {m['period_max_ms']:.1f} ms;"
        f" {m['retries']} retries, {m['timeouts']} timeouts, {m['corrupt']} corrupt)",
        f"  achieved / wire limit: {m['ratio_to_wire_limit']:.2f}",
        f"  goal >= {GOAL_RATE_HZ:.0f} Hz: {verdict(m['meets_rate_goal'])}",
        f"  goal >= {GOAL_WIRE_FRACTION:.0%} of the wire limit: {verdict(m['meets_wire_goal'])}",
        "  note: the twin's pty has no baud rate, so this loop is CPU-bound here (SDK and twin share one"
        " process);",
        "        a real 1 Mbps bus cannot exceed the wire limit, so a ratio above 1 means the host has headroom.",
    ])


def main(args) -> int:
    m = measure(float(getattr(args, "seconds", 3.0)), float(getattr(args, "protocol", 2.0)))
    print(json.dumps(m, indent=2) if getattr(args, "json", False) else render(m))
    return 0
