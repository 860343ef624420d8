"""Run one of NI grpc-device's Python examples, unmodified, with nidaqmx's bundled stubs for its own.

    python run_grpc_device_example.py EXAMPLE.py ARG...

The examples import ``nidaqmx_pb2`` and ``nidaqmx_pb2_grpc`` as protoc writes them from grpc-device's
nidaqmx.proto (plus session_pb2); nidaqmx ships the same service's stubs, so this script registers those
under the examples' names and runs the example as ``__main__`` with ARG... as its command line.
"""

from __future__ import annotations

import runpy
import sys

from nidaqmx._stubs import nidaqmx_pb2, nidaqmx_pb2_grpc

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: run_grpc_device_example.py EXAMPLE.py ARG...")
    sys.modules.update(nidaqmx_pb2=nidaqmx_pb2, nidaqmx_pb2_grpc=nidaqmx_pb2_grpc)
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
