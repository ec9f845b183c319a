"""tools/report's commands and versions: the exact command each build ran, and every version and
build field of each file's context, with what the puzzling ones mean."""
import re
import shlex

from .build_context import NOT_BUILT_FIELD
from .page import Code, CodeBlock, Heading, Paragraph, Strong, Table
from .report_builds import NOT_RUN_FIELD
from .result_schema import SCHEMA_FIELD


# Context fields that may hold the command a file was made with, the first present wins:
# tools/run-matrix records "command_line"; the others are read where a runner wrote them.
COMMAND_FIELDS = ("command_line", "command", "cubench_command", "argv")
# Context fields with a section of their own (conditions, commands, builds), left out of the
# table of versions and build fields.
SHOWN_ELSEWHERE = {SCHEMA_FIELD, NOT_BUILT_FIELD, NOT_RUN_FIELD, *COMMAND_FIELDS, "executable", "note",
                   "gpu", "gpu_power_limit_W", "gpu_default_sm_clock_mhz", "gpu_max_sm_clock_mhz",
                   "gpu_other_processes_at_start", "nvml", "copy_ceiling_GBps", "processes",
                   "process_dates", "date", "interrupted"}



def command_of(build):
    """(the command the file was made with, or None; what the page says besides)."""
    for field in COMMAND_FIELDS:
        value = build.context.get(field)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return shlex.join(value), None
        if isinstance(value, str) and value:
            return value, None
    executable = build.context.get("executable")
    said = "the file does not hold its command line"
    return None, f"{said}; its executable: {executable}" if executable else said


def command_blocks(comparison, argv):
    blocks = [Heading(2, "Commands")]
    for b in comparison.builds:
        command, note = command_of(b)
        processes = b.context.get("processes")
        blocks.append(Paragraph([Strong(b.label), ": ", Code(b.path)]
                                + ([f", {processes} processes of"] if processes and command else [])
                                + ([f" ({note})"] if note else [":"] if command else [])))
        if command:
            blocks.append(CodeBlock(command))
    blocks += [Paragraph("This page:"), CodeBlock(shlex.join(["tools/report", *argv]))]
    return blocks


def scalar(value):
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


# What a context field is, where its name or value leaves a reader guessing (cubench's
# fixtures/detail/report/context.cpp writes them; Google Benchmark writes library_build_type).
FIELD_MEANINGS = {
    "google_benchmark": "the Google Benchmark library the build linked, as CMake found it where the build "
                        "was configured: it runs each row's loop and writes this file; the times are "
                        "cubench's own (manual time, which cubench measures itself), so its version does "
                        "not enter them",
    "library_build_type": "how Google Benchmark's own library was compiled (debug: without NDEBUG, as "
                          "Debian's is): it concerns the library's timing loop, which cubench's rows do not "
                          "use (docs/setup.md)",
    "build_type": "cubench's own CMake build type",
    "cuda_toolkit": "the toolkit the build was compiled with",
    "cuda_runtime": "the CUDA runtime the binary ran with",
    "cuda_driver_api": "the driver's CUDA version: the machine's driver, not the build's",
    "git_revision": "the cubench commit built",
    "host_compiler": "the C++ compiler of the build",
    "stopping": "cubench's rule for when a row has enough samples",
    "world": "how the process ran: alone or as MPI ranks",
    "datasheet": "the datasheet whose peaks pct_peak is of",
}


def architectures_of(value):
    """The GPU architectures ({"90"}) a cuda_architectures value names, or None where it names
    none (OFF, all, or a form not read here)."""
    native = re.fullmatch(r"native \(([0-9a-z ;,]+)\)", value)
    listed = native.group(1) if native else value
    numbers = [re.fullmatch(r"([0-9]+[a-z]?)(-real|-virtual)?", part.strip())
               for part in re.split(r"[;, ]+", listed)]
    if not numbers or not all(numbers):
        return None
    return {m.group(1) for m in numbers}


def sm_list(archs):
    return ", ".join("sm_" + a for a in sorted(archs))


def architecture_value_meaning(value):
    """What one cuda_architectures value says (cmake/CudaArchitectures.cmake chooses it)."""
    archs = architectures_of(value)
    if value.startswith("native") and archs:
        return f"{value}: configure saw the machine's GPU and built for it alone ({sm_list(archs)})"
    if archs and "-real" in value:  # configure's list where it sees no GPU has this form
        return (f"{value}: configure's list where it saw no GPU (every architecture from 7.5 up that the "
                f"toolkit lists, the newest also as PTX), or one named so ({sm_list(archs)})")
    if archs:
        return (f"{value}: named at configure (-DCMAKE_CUDA_ARCHITECTURES or CUDAARCHS): "
                f"{sm_list(archs)} code")
    if value == "OFF":
        return ("OFF: CMake passed no architecture flags, so the file does not say which GPU code the "
                "build holds")
    return ""


def architectures_meaning(values):
    """What the cuda_architectures values say, each one that occurs, and whether the builds'
    GPU code is for the same architectures however the value is written."""
    said = ["the GPU code the build holds (CMAKE_CUDA_ARCHITECTURES)"]
    said += [m for m in (architecture_value_meaning(v) for v in dict.fromkeys(values) if v != "-") if m]
    archs = [architectures_of(v) for v in values if v != "-"]
    if len(set(values)) > 1 and archs and all(a is not None and a == archs[0] for a in archs):
        said.append(f"every build holds {sm_list(archs[0])} code: the same, written differently")
    return "; ".join(said)


def field_meaning(field, values):
    if field == "cuda_architectures":
        return architectures_meaning(values)
    meaning = FIELD_MEANINGS.get(field, "")
    if field == "google_benchmark" and len(set(values) - {"-"}) > 1:
        meaning += ("; the versions differ because each build took the one of the system it was "
                    "configured on")
    return meaning


def version_blocks(comparison):
    """Every version and build field of the contexts, with what the puzzling ones mean: what
    differs between the builds is what the comparison compares."""
    c, fields = comparison, []
    for b in c.builds:
        for field, value in b.context.items():
            if field not in fields and field not in SHOWN_ELSEWHERE and scalar(value):
                fields.append(field)
    rows = []
    for field in fields:
        values = [str(b.context[field]) if scalar(b.context.get(field)) else "-" for b in c.builds]
        differs = "yes" if len(set(values)) > 1 else ""
        rows.append([Code(field)] + values + [differs, field_meaning(field, values)])
    return [Heading(2, "Libraries and build"),
            Paragraph("Every version and build field of each file's context (-: the file has no such "
                      "field), and what the puzzling ones mean."),
            Table(["field"] + [b.label for b in c.builds] + ["differs", "what it is"], rows, prose=True)]
