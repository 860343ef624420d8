"""Run one of nidaqmx-python's example programs, unmodified, against NI-DAQmx on a remote NI gRPC Device Server.

    python run_nidaqmx_example.py HOST:PORT EXAMPLE.py

The examples make ``nidaqmx.Task()`` and ``System.local()`` with no ``grpc_options``, so on their own they load
the local NI-DAQmx library. nidaqmx has no setting for a default remote server: a program passes the server to
each object it makes. Every such object asks one function, ``nidaqmx.utils._select_interpreter``, which
talks gRPC when given options and loads the library otherwise; this script makes that function use the server
at HOST:PORT when a program gives none (each task on its own server-named session), then runs the example as
``__main__`` with this process's stdin, stdout, cwd and signals. SIGUSR1 prints every thread's stack to stderr
(the tests send it to an example that does not end, before killing it).
"""

from __future__ import annotations

import faulthandler
import runpy
import signal
import sys

import grpc
import nidaqmx
import nidaqmx.utils


def main(address: str, example: str) -> None:
    channel = grpc.insecure_channel(address)
    remote = nidaqmx.GrpcSessionOptions(channel, "")  # "": the server names each task's session
    select = nidaqmx.utils._select_interpreter

    def remote_unless_told(grpc_options=None, interpreter=None):
        return select(grpc_options or remote, interpreter)

    nidaqmx.utils._select_interpreter = remote_unless_told
    sys.argv = [example]
    runpy.run_path(example, run_name="__main__")


if __name__ == "__main__":
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if len(sys.argv) != 3:
        sys.exit("usage: run_nidaqmx_example.py HOST:PORT EXAMPLE.py")
    main(sys.argv[1], sys.argv[2])
