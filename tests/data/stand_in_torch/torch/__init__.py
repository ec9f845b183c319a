"""A stand-in for PyTorch (tests/test_torch_reference.py): enough of its surface for
tools/torch_reference.py's gemm, sigmoid, svd, gemm_decode and conv cases to run where there is no
GPU and no PyTorch, each CUDA event 0.125 ms after the one before, so that the rows it writes are
the same every run."""
import types


class _T:
    def __init__(self, *a, **k):
        pass

    def __mul__(self, o):
        return self
    __rmul__ = __sub__ = __add__ = __truediv__ = __mul__

    def to(self, *a, **k):
        return self

    def t(self):
        return self

    def numel(self):
        return 1000

    def element_size(self):
        return 2

    def add_(self, x):
        return self


float32, float16, bfloat16, float64, float8_e4m3fn = "f32", "f16", "bf16", "f64", "f8"
channels_last, contiguous_format = "cl", "cf"
__version__ = "9.9.9+fake"
rand = randn = empty = ones = lambda *a, **k: _T()
empty_like = lambda x: _T()
mm = lambda a, b: _T()
sigmoid = lambda x, out=None: out
_scaled_mm = lambda *a, **k: _T()
linalg = types.SimpleNamespace(svd=lambda x, full_matrices=False: None)
nn = types.SimpleNamespace(functional=types.SimpleNamespace(linear=lambda x, w: _T(), conv2d=lambda *a, **k: _T()))
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)),
                                 cudnn=types.SimpleNamespace(benchmark=False, allow_tf32=False, version=lambda: 90100))
version = types.SimpleNamespace(cuda="12.4")
_C = types.SimpleNamespace()
_clock = [0.0]


class _Event:
    def __init__(self, enable_timing=False):
        self.t = 0.0

    def record(self):
        _clock[0] += 0.125
        self.t = _clock[0]

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return other.t - self.t


cuda = types.SimpleNamespace(
    is_available=lambda: True,
    get_device_properties=lambda i: types.SimpleNamespace(name="Fake GPU", L2_cache_size=50 << 20),
    Event=_Event, synchronize=lambda: None, empty_cache=lambda: None, reset_peak_memory_stats=lambda: None,
    memory_allocated=lambda: 1024, max_memory_allocated=lambda: 4096, max_memory_reserved=lambda: 8192)
