"""torch.compile for tools/torch_reference.py's compiled rows: the modules cubench's compiled rows
load as AOTInductor packages (compiled_modules.py) under torch.compile in --compile-mode, with
fixed shapes as the packages have (one graph per shape), warm after the first call (whose compile
is in first_forward_ms / first_run_ms)."""

MODES = ("default", "max-autotune")
mode = "default"  # --compile-mode, set by torch_reference.main()


def compiled(torch, module):
    return torch.compile(module, mode=None if mode == "default" else mode, dynamic=False)
