"""The fallback server (`local-llama-cpp`): `python -m llama_cpp.server`, with ggml's extra weight buffers (AMX, repacking) off.

AMX kernels die under a hypervisor that does not enable the AMX tile state, although the CPU
reports AMX (CHANGELOG: round 2); plain CPU buffers run everywhere the build runs, and a 135M
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
