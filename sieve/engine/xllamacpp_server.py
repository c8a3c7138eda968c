"""llama.cpp's own server from the xllamacpp wheel, run as sieve's child: `python -m sieve.engine.xllamacpp_server`.

xllamacpp serves the OpenAI-compatible API from threads inside the process that makes its
`Server`; sieve makes it here, in a process of its own, so a crash in the native code cannot take
the TUI down, and the parent-death signal still stops it. The settings are chosen in
sieve.engine.local_servers; this module only applies them.
"""

from __future__ import annotations

import argparse
import signal


def params(args: argparse.Namespace):  # -> xllamacpp.CommonParams (no stubs to name it by)
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = args.model
    p.model_alias = [args.alias]  # a set of names: a bare string would be read as its letters
    p.hostnames = ["127.0.0.1"]
    p.port = args.port
    p.n_parallel = args.slots
    # Each slot has a context of its own: n_ctx is shared out among them.
    p.n_ctx = args.ctx * args.slots
    # Threads: the default (OpenMP, every core, spinning while it waits) runs at a tenth of the speed
    # or worse when anything else wants a core (the TUI, a batch, another program); see local_servers.
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    # ggml's extra weight buffers (AMX, repacking) off: AMX kernels die under a hypervisor that does
    # not enable the AMX tile state although the CPU reports AMX (CHANGELOG: round 2). The CPU wheel
    # is built without AMX today; this keeps a later wheel, or a source build, from bringing it back.
    p.no_extra_bufts = True
    p.ui = False  # the server's web page: sieve is the interface
    return p


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sieve.engine.xllamacpp_server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, required=True, help="the context of each slot")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--slots", type=int, default=1)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    import xllamacpp

    server = xllamacpp.Server(params(args))
    print(f"sieve: xllamacpp serving on {server.listening_address}", flush=True)
    # The server runs in native threads; this one waits for SIGTERM, whose default action ends the
    # process at once (a Python exit would wait on threads that never end).
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
