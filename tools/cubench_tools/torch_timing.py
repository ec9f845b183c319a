"""How tools/torch_reference.py times a case as cubench times one: warm-up calls, then repetitions
of CUDA-event samples (the L2 flushed before each for a cold case) until a repetition holds its
minimum time and sample count, with the GPU's conditions (SM clock, power cap, energy) polled
from NVML while they run."""
import os
import statistics


class Conditions:
    """The SM clock and the software power cap while a repetition's samples run, polled from NVML
    every 10 ms on a thread (as cubench polls its conditions), so that a row here says the clock its
    time ran at and the tools can set cycles against cycles: sm_clock_MHz (the mean of the polls)
    and power_capped_pct (polls that found the software power cap holding the clock). Nothing is
    claimed where NVML (pynvml) cannot be read."""

    POWER_CAP = 0x4  # nvmlClocksEventReasonSwPowerCap

    def __init__(self):
        self.nvml = self.handle = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0))
        except Exception:  # noqa: BLE001 - no pynvml or no NVML: no clock figure, said by its absence
            self.nvml = None

    def reasons(self):
        n = self.nvml
        fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
        return fn(self.handle)

    def during(self, work, energy=False):
        """Runs work() while polling; returns (its result, {counter: value}). With `energy`, also
        energy_J: NVML's total-energy counter's rise over the work (it moves in steps of up to
        ~100 ms: a window of seconds, as a whole image's samples, holds that to a few %)."""
        if self.nvml is None:
            return work(), {}
        joules = None
        if energy:
            try:
                joules = self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)
            except Exception:  # noqa: BLE001 - no energy counter on this GPU: no figure
                joules = None
        import threading
        clocks, capped, stop = [], [], threading.Event()

        def poll():
            while not stop.is_set():
                try:
                    clocks.append(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))
                    capped.append(bool(self.reasons() & self.POWER_CAP))
                except Exception:  # noqa: BLE001 - one failed poll is not a figure
                    pass
                stop.wait(0.01)
        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        try:
            result = work()
        finally:
            stop.set()
            thread.join()
        figures = {}
        if joules is not None:
            try:
                figures["energy_J"] = (self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) - joules) / 1e3
            except Exception:  # noqa: BLE001 - no figure
                pass
        if clocks:
            figures["sm_clock_MHz"] = statistics.fmean(clocks)
            figures["power_capped_pct"] = 100.0 * sum(capped) / len(capped)
        return result, figures


CONDITIONS = None


def time_case(torch, op, cold, args, flush):
    repetitions, min_time = args.repetitions, args.min_time
    for _ in range(args.warmup):  # handles, heuristics, module load
        op()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = []
    global CONDITIONS
    if CONDITIONS is None:
        CONDITIONS = Conditions()
    for _ in range(repetitions):
        def samples_of():
            samples, total = [], 0.0
            while total < min_time or len(samples) < args.min_samples:
                if cold:
                    flush.add_(1)
                start.record()
                op()
                stop.record()
                stop.synchronize()
                s = start.elapsed_time(stop) * 1e-3
                samples.append(s)
                total += s
            return samples
        samples, figures = CONDITIONS.during(samples_of, energy=getattr(op, "energy", False))
        if "energy_J" in figures:  # per run, as cubench's energy_per_run_J
            figures["energy_per_run_J"] = figures.pop("energy_J") / len(samples)
        reps.append((statistics.fmean(samples), len(samples), figures))
    return reps

