"""`uartlab doctor`: what this machine has for running the UART finger rig, and what is missing.

Every probe is guarded so doctor never raises: its whole point is to run on machines that lack
things. Probes that could hang or abort the process (creating a Qt application without a display)
run in a subprocess with a timeout. The FTDI latency timer (drivers/ftdi_latency.py) is reported for every
USB serial adapter found and, with ``--rig rig.toml``, for the port the rig's servos are configured on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from uartlab import __version__

# (report name, distribution names to try, what its absence means for the rig).
# PySide6 is usually installed as PySide6-Essentials (our dependency) but the full PySide6 also works.
PACKAGES: list[tuple[str, tuple[str, ...], str]] = [
    ("numpy", ("numpy",), "nothing in uartlab can run"),
    ("scipy", ("scipy",), "the static holding-tension solver in sim/ cannot run"),
    ("numba", ("numba",), "the compiled finger model in sim/ cannot run, so neither the model nor the twin"),
    ("h5py", ("h5py",), "recordings cannot be saved or replayed"),
    ("PySide6", ("PySide6-Essentials", "PySide6"), "the GUI cannot run"),
    ("pyqtgraph", ("pyqtgraph",), "the GUI's live plots cannot run"),
    ("dynamixel-sdk", ("dynamixel-sdk",), "the real Dynamixel motors cannot be driven"),
    ("nidaqmx", ("nidaqmx",), "neither the real USB-6210 nor the twin DAQ (which also talks nidaqmx) works"),
    ("pyserial", ("pyserial",), "serial ports cannot be opened, so the real motors are unreachable"),
    ("matplotlib", ("matplotlib",), "result and calibration figures cannot be drawn"),
    ("tomli-w", ("tomli-w",), "finger parameters cannot be saved to TOML"),
]

TWIN_DAQ_NOTE = "The simulated twin uses nidaqmx's gRPC path, so the driver is not needed for the twin rig."
LOOPBACK_ONLY = "only loopback: the simulated Motive twin works, a real Motive server cannot be reached"

# Printed line by line so a crash in QGuiApplication() still tells us the import itself worked.
_QT_SCRIPT = (
    "import sys\n"
    "from PySide6.QtGui import QGuiApplication\n"
    "print('imported', flush=True)\n"
    "app = QGuiApplication(sys.argv[:1])\n"
    "print('platform=' + app.platformName(), flush=True)\n"
)


def add_parser(sub) -> None:
    doctor = sub.add_parser("doctor", help="what this machine has for a rig, and what is missing")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.add_argument("--rig", type=Path, help="rig.toml: also check the serial port its servos are on "
                                                 "(the FTDI latency timer)")
    doctor.set_defaults(run=main)


def _first_sentence(message: object) -> str:
    text = " ".join(str(message).split())
    head = text.split(". ")[0].rstrip(".")
    return head or "no message"


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name, dists, _ in PACKAGES:
        versions[name] = None
        for dist in dists:
            try:
                versions[name] = metadata.version(dist)
                break
            except Exception:  # PackageNotFoundError, or a broken dist-info: either way not usable
                continue
    return versions


def _qt_reason(stderr: str, returncode: int) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    # Qt's own abort message names the plugin; it beats the trailing "Available platform plugins" line.
    for line in lines:
        if "could not" in line.lower():
            return line
    if lines:
        return lines[-1]
    return f"killed by signal {-returncode}" if returncode < 0 else f"exit code {returncode}"


def _qt() -> dict[str, Any]:
    env_platform = os.environ.get("QT_QPA_PLATFORM") or None
    display = os.environ.get("WAYLAND_DISPLAY") or os.environ.get("DISPLAY") or None
    qt: dict[str, Any] = {"imports": False, "app_starts": False, "probed_platform": None,
                          "platform": env_platform, "source": "QT_QPA_PLATFORM" if env_platform else None,
                          "display": display, "error": None, "note": None}
    try:
        proc = subprocess.run([sys.executable, "-c", _QT_SCRIPT], capture_output=True, text=True,
                              timeout=20, env=dict(os.environ))
        out = proc.stdout.splitlines()
        qt["imports"] = "imported" in out
        for line in out:
            if line.startswith("platform="):
                qt["probed_platform"] = line.removeprefix("platform=")
        qt["app_starts"] = proc.returncode == 0 and qt["probed_platform"] is not None
        if not qt["app_starts"]:
            qt["error"] = _xcb_libraries() or _qt_reason(proc.stderr, proc.returncode)
    except subprocess.TimeoutExpired:
        qt["error"] = "creating a QGuiApplication did not finish within 20 s"
    except Exception as exc:
        qt["error"] = f"could not start {sys.executable}: {_first_sentence(exc)}"
    if env_platform is None and qt["probed_platform"]:
        qt["platform"], qt["source"] = qt["probed_platform"], "QGuiApplication.platformName()"
    # Windows and macOS have native platforms; only X11/Wayland systems need a display variable.
    if env_platform is None and display is None and sys.platform not in ("win32", "darwin"):
        qt["note"] = ("QT_QPA_PLATFORM is not set and there is no DISPLAY or WAYLAND_DISPLAY; "
                      "set QT_QPA_PLATFORM=offscreen to run the GUI code headless")
    return qt


def _xcb_libraries() -> str | None:
    """Which system libraries Qt's X11 plugin lacks, with the apt package (Qt's own message names
    libxcb-cursor0 whatever is missing); None when that is not why Qt failed."""
    from uartlab.app.gui import qt_platform

    if not qt_platform.xcb_wanted():
        return None
    try:
        qt_platform.check()
    except Exception as exc:  # DeviceError: the one line `uartlab gui` would print
        return str(exc)
    return None


def _nidaqmx() -> dict[str, Any]:
    report: dict[str, Any] = {"driver": None, "reason": None, "twin": TWIN_DAQ_NOTE}
    try:
        import nidaqmx.system  # statement form, so a blocked top-level package also fails here

        version = nidaqmx.system.System.local().driver_version
        # DriverVersion is a (major, minor, update) namedtuple; str() covers any other shape.
        report["driver"] = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
    except ImportError as exc:
        report["reason"] = f"the nidaqmx package does not import ({_first_sentence(exc)})."
    except Exception as exc:  # DaqNotFoundError without the driver, OSError for a broken one ...
        report["reason"] = f"{type(exc).__name__}: {_first_sentence(exc)}."
    return report


def _serial_ports() -> list[dict[str, Any]]:
    from serial.tools import list_ports

    ports = []
    for port in list_ports.comports():
        vid, pid = getattr(port, "vid", None), getattr(port, "pid", None)
        ports.append({"device": str(port.device), "description": str(port.description),
                      "vid_pid": f"{vid:04x}:{pid:04x}" if vid is not None and pid is not None else None})
    return ports


def _latency_timer_row(port: str, source: str, sysfs_root: str | Path | None) -> dict[str, Any]:
    from uartlab.drivers import ftdi_latency

    timer = ftdi_latency.find(port, sysfs_root or ftdi_latency.SYSFS_ROOT)
    return {"port": port, "source": source, "ftdi": timer.is_ftdi, "path": str(timer.path) if timer.path else None,
            "value_ms": timer.value_ms, "ok": timer.ok(), "text": timer.describe(),
            "fix": None if timer.ok() else timer.fix_commands()[0]}


def _latency_timers(rig: Any, rig_name: str | None, ports: list[dict[str, Any]],
                    sysfs_root: str | Path | None) -> list[dict[str, Any]]:
    """The FTDI latency timer of the rig's servo port (if a rig was given) and of every USB adapter found."""
    rows = []
    if rig is not None:
        from uartlab.app.rig import backends

        source = f"{rig_name} actuators.port"
        if backends.ACTUATORS[rig.actuators.backend].on_twin:
            rows.append({"port": "(twin)", "source": source, "ftdi": False, "path": None, "value_ms": None,
                         "ok": True, "text": "the twin's pseudo-terminal: not an FTDI adapter", "fix": None})
        else:
            rows.append(_latency_timer_row(rig.actuators.port, source, sysfs_root))
    listed = {row["port"] for row in rows}
    for port in ports:
        if port.get("vid_pid") and port["device"] not in listed:
            rows.append(_latency_timer_row(port["device"], "found", sysfs_root))
    return rows


def _ip_addresses() -> dict[str, dict[str, Any]] | None:
    # `ip -j addr` is cheap and stdlib-parseable; anything else would need a third-party package.
    ip = shutil.which("ip")
    if ip is None:
        return None
    try:
        proc = subprocess.run([ip, "-j", "addr"], capture_output=True, text=True, timeout=5)
        entries = json.loads(proc.stdout) if proc.returncode == 0 else None
    except Exception:
        return None
    if not isinstance(entries, list):
        return None
    return {str(e.get("ifname")): {
        "ipv4": [a.get("local") for a in e.get("addr_info", []) if a.get("family") == "inet"],
        "loopback": "LOOPBACK" in e.get("flags", []), "state": e.get("operstate")} for e in entries}


def _network() -> dict[str, Any]:
    details = _ip_addresses()
    interfaces = []
    for index, name in socket.if_nameindex():
        info = (details or {}).get(name, {})
        # Without `ip` flags, "lo"/"lo0" is the loopback on Linux and macOS alike.
        interfaces.append({"name": name, "index": index, "ipv4": info.get("ipv4") if details else None,
                           "loopback": info.get("loopback", name.startswith("lo")),
                           "state": info.get("state")})
    outside = [i for i in interfaces if not i["loopback"]]
    if details is not None:
        usable = [i for i in outside if i["ipv4"]]
        ok = bool(usable)
        mocap = ("NatNet can use " + ", ".join(f"{i['name']} ({', '.join(i['ipv4'])})" for i in usable)
                 + " if it is on the Motive PC's network") if ok else LOOPBACK_ONLY
    elif outside:
        ok = None  # interfaces exist but we could not see their addresses
        mocap = ("IPv4 addresses unknown (no usable `ip` command); NatNet needs one of "
                 + ", ".join(i["name"] for i in outside) + " on the Motive PC's network")
    else:
        ok, mocap = False, LOOPBACK_ONLY
    return {"interfaces": interfaces, "ipv4_source": "ip -j addr" if details is not None else None,
            "mocap_ok": ok, "mocap": mocap}


def _extras() -> dict[str, dict[str, Any]]:
    """Each of uartlab's extras ([rig], [gui]): installed, and if not, which modules are absent and the pip line."""
    from uartlab.app.cli import extras

    report = {}
    for extra, (what, _) in extras.EXTRAS.items():
        absent = extras.missing_modules(extra)
        report[extra] = {"installed": not absent, "for": what, "missing_modules": absent,
                         "install": extras.pip_line(extra) if absent else None}
    return report


def _guard(name: str, probe: Callable[[], Any], fallback: Any, errors: dict[str, str]) -> Any:
    try:
        return probe()
    except Exception as exc:  # a probe bug or an odd machine must not stop the rest of the report
        errors[name] = f"{type(exc).__name__}: {_first_sentence(exc)}"
        return fallback


def _missing(report: dict[str, Any], errors: dict[str, str]) -> list[str]:
    missing = []
    packages = report.get("packages", {})
    for name, dists, meaning in PACKAGES:
        if packages.get(name) is None:
            missing.append(f"{name} is not installed: {meaning} (pip install {dists[0]}).")
    qt = report.get("qt", {})
    if packages.get("PySide6") is not None and not qt.get("imports"):
        error = str(qt.get("error")).rstrip(".")
        missing.append(f"PySide6 is installed but does not import ({error}): the GUI cannot run.")
    elif qt.get("note"):  # no display explains any failure to start, so one sentence is enough
        missing.append("No display for Qt (QT_QPA_PLATFORM unset, no DISPLAY or WAYLAND_DISPLAY): the GUI "
                       "cannot open a window; set QT_QPA_PLATFORM=offscreen to run it headless.")
    elif qt.get("imports") and not qt.get("app_starts"):
        error = str(qt.get("error")).rstrip(".")
        missing.append(f"Qt cannot start a GUI application ({error}): the GUI cannot run.")
    daq = report.get("nidaqmx", {})
    if packages.get("nidaqmx") is not None and daq.get("driver") is None:
        missing.append("NI-DAQmx driver not found: the real USB-6210 cannot be used; the twin DAQ works.")
    if "serial_ports" not in errors and not any(p.get("vid_pid") for p in report.get("serial_ports", [])):
        missing.append("No USB serial adapter found: the real Dynamixel motors cannot be reached; "
                       "the twin rig still works.")
    for timer in report.get("latency_timers", []):
        if not timer.get("ok", True):
            missing.append(f"The FTDI latency timer of {timer['port']} is {timer['value_ms']} ms, not 1 ms: every "
                           f"Dynamixel reply may wait that long ({timer['fix']}; docs/operator.md has the "
                           f"udev rule that keeps it).")
    if report.get("network", {}).get("mocap_ok") is False:
        missing.append("Only loopback networking: the simulated Motive twin works, "
                       "a real Motive server cannot be reached.")
    for name, error in errors.items():
        missing.append(f"The {name} probe failed ({error}): that section of the report is incomplete.")
    return missing


def collect(rig: Any = None, rig_name: str | None = None, sysfs_root: str | Path | None = None) -> dict[str, Any]:
    """Probe the machine; the result is plain JSON data (str, int, bool, None, lists, dicts). ``rig``: a
    RigConfig whose servo port is checked too; ``sysfs_root``: where the latency timers are (default /sys)."""
    errors: dict[str, str] = {}
    report: dict[str, Any] = {
        "uartlab": __version__,
        "python": _guard("python", lambda: {"version": platform.python_version(),
                                            "executable": sys.executable,
                                            "platform": platform.platform()}, {}, errors),
        "packages": _guard("packages", _package_versions, {name: None for name, _, _ in PACKAGES}, errors),
        "extras": _guard("extras", _extras, {}, errors),
        "qt": _guard("qt", _qt, {}, errors),
        "nidaqmx": _guard("nidaqmx", _nidaqmx, {"twin": TWIN_DAQ_NOTE}, errors),
        "serial_ports": _guard("serial_ports", _serial_ports, [], errors),
        "network": _guard("network", _network, {"interfaces": []}, errors),
    }
    report["latency_timers"] = _guard("latency_timers", lambda: _latency_timers(
        rig, rig_name, report["serial_ports"], sysfs_root), [], errors)
    report["missing"] = _guard("missing", lambda: _missing(report, errors), [], errors)
    return report


def _status(ok: Any) -> str:
    return "OK" if ok else "missing"


def _section(title: str, rows: list[tuple[str, str]]) -> list[str]:
    width = max((len(key) for key, _ in rows), default=0)
    return [title, "-" * len(title)] + [f"  {key:<{width}}  {value}".rstrip() for key, value in rows] + [""]


def render(report: dict[str, Any]) -> str:
    """The report as aligned text: one section per probe, then what is missing."""
    py, qt, daq, net = (report.get(k) or {} for k in ("python", "qt", "nidaqmx", "network"))
    lines = [f"uartlab doctor ({report.get('uartlab')})", "==============", ""]
    lines += _section("Python", [(k, str(py.get(k))) for k in ("version", "executable", "platform")])
    lines += _section("Packages", [(name, f"{_status(version):<8} {version or ''}")
                                   for name, version in (report.get("packages") or {}).items()])
    extras_rows = [(f"[{name}]", "OK       " + e.get("for", "") if e.get("installed") else
                    f"missing  no module {', '.join(e.get('missing_modules', []))}: {e.get('install')}")
                   for name, e in (report.get("extras") or {}).items()]
    lines += _section("Extras", extras_rows or [("(unknown)", "")])
    platform_text = (f"{qt.get('platform')} (from {qt.get('source')})" if qt.get("platform")
                     else "unknown: no plugin could start")
    qt_rows = [("PySide6 imports", _status(qt.get("imports"))), ("app starts", _status(qt.get("app_starts"))),
               ("platform plugin", platform_text), ("display", qt.get("display") or "none")]
    qt_rows += [("error", qt["error"])] if qt.get("error") else []
    qt_rows += [("note", qt["note"])] if qt.get("note") else []
    lines += _section("Qt", qt_rows)
    driver = f"OK       {daq['driver']}" if daq.get("driver") else f"missing  {daq.get('reason') or ''}"
    lines += _section("NI-DAQmx", [("driver", driver), ("twin", str(daq.get("twin", TWIN_DAQ_NOTE)))])
    ports = report.get("serial_ports") or []
    port_rows = [(p.get("device", "?"), f"{p.get('vid_pid') or 'no vid:pid':<12}{p.get('description', '')}")
                 for p in ports]
    lines += _section("Serial ports", port_rows or [("(none found)", "")])
    timer_rows = [(t.get("port", "?"), f"{('OK' if t.get('ok') else 'too long') if t.get('ftdi') else 'n/a':<8} "
                   f"{t.get('text', '')}")
                  for t in report.get("latency_timers") or []]
    lines += _section("FTDI latency timer", timer_rows or [("(no USB serial adapter, no --rig)", "")])
    net_rows = [(i.get("name", "?"), f"{'loopback' if i.get('loopback') else '':<10}"
                 + (", ".join(i["ipv4"]) or "no IPv4" if i.get("ipv4") is not None else "IPv4 unknown"))
                for i in net.get("interfaces", [])]
    mocap_word = "unknown" if net.get("mocap_ok") is None else _status(net["mocap_ok"])
    net_rows.append(("mocap", f"{mocap_word:<8} {net.get('mocap', 'unknown')}"))
    lines += _section("Network", net_rows)
    missing = report.get("missing") or ["Nothing is missing for a full rig."]
    lines += ["What is missing", "---------------"] + [f"  - {m}" for m in missing]
    return "\n".join(lines).rstrip()


def main(args: argparse.Namespace) -> int:
    """Print the report; 0, because reporting what is missing is doctor's job, not a failure (a --rig file
    that cannot be used is bad input: ConfigError, exit 2)."""
    rig_path = getattr(args, "rig", None)
    rig = None
    if rig_path is not None:  # a rig.toml that cannot be used is bad input, before anything is probed
        from uartlab.app.rig.config import load_rig_config

        rig = load_rig_config(rig_path)
    report = collect(rig, str(rig_path) if rig_path else None)
    # default=str only as a last resort so --json can never crash on an unexpected value.
    print(json.dumps(report, indent=2, default=str) if getattr(args, "json", False) else render(report))
    return 0
