"""`python -m llama_cpp.server`, with ggml's extra weight buffers (AMX, repacking) turned off.

llama.cpp compiled on a machine whose CPU reports AMX uses AMX kernels for the
Q4_1 weights of SmolLM2. Under a hypervisor that does not enable the AMX tile
state (Firecracker, for one) those kernels die with a general protection fault
on the first reply. Plain CPU buffers run everywhere the build runs, and a 135M
model gives up little speed for it. Everything else is llama.cpp's own server.
"""

from __future__ import annotations


def _without_extra_buffers() -> None:
    import llama_cpp.llama_cpp as native

    default = native.llama_model_default_params

    def params():
        p = default()
        p.use_extra_bufts = False
        return p

    native.llama_model_default_params = params


if __name__ == "__main__":
    _without_extra_buffers()
    from llama_cpp.server.__main__ import main

    main()
