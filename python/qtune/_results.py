"""What quantize(), tune() and autotune() return: dataclasses with the main fields typed,
.to_dict() giving the whole JSON object the CLI prints with --json (docs/formats/), and
result["key"] reading that object too, so code written against the dicts keeps working."""
import copy
import dataclasses
from typing import Any, Dict, List, Optional


@dataclasses.dataclass(frozen=True)
class _Result:
    raw: Dict[str, Any] = dataclasses.field(repr=False, compare=False)

    def to_dict(self):
        """The JSON object as `qtune ... --json` prints it (a deep copy)."""
        return copy.deepcopy(self.raw)

    def __getitem__(self, key):
        return self.raw[key]

    def __contains__(self, key):
        return key in self.raw

    def keys(self):
        return self.raw.keys()

    @classmethod
    def _from(cls, raw, **fields):
        return cls(raw=raw, **fields)


@dataclasses.dataclass(frozen=True)
class LayerResult:
    """One row of the quantize summary's `layers` (docs/formats/summary.md)."""
    node: str
    op: str
    quantized: bool
    raw: Dict[str, Any] = dataclasses.field(repr=False, compare=False)

    def to_dict(self):
        return copy.deepcopy(self.raw)


@dataclasses.dataclass(frozen=True)
class QuantizeResult(_Result):
    """qtune.quantize(): `qtune quantize --json` (docs/formats/summary.md)."""
    output: Optional[str] = None
    recipe: Optional[str] = None
    target: Optional[str] = None
    calibration_source: Optional[str] = None
    quantized_layers: int = 0
    float_layers: int = 0
    enabled_quantizers: int = 0
    disabled_quantizers: int = 0
    layers: List[LayerResult] = dataclasses.field(default_factory=list)
    warnings: List[str] = dataclasses.field(default_factory=list)
    accuracy_fallback: Optional[Dict[str, Any]] = None

    @classmethod
    def from_json(cls, raw):
        return cls(raw=raw, output=raw.get("output"), recipe=raw.get("recipe"),
                   target=raw.get("target"), calibration_source=raw.get("calibration_source"),
                   quantized_layers=raw.get("quantized_layers", 0),
                   float_layers=raw.get("float_layers", 0),
                   enabled_quantizers=raw.get("enabled_quantizers", 0),
                   disabled_quantizers=raw.get("disabled_quantizers", 0),
                   layers=[LayerResult(node=row.get("node", ""), op=row.get("op", ""),
                                       quantized=bool(row.get("quantized")), raw=row)
                           for row in raw.get("layers", [])],
                   warnings=list(raw.get("warnings", [])),
                   accuracy_fallback=raw.get("accuracy_fallback"))


@dataclasses.dataclass(frozen=True)
class TuneRow:
    """One candidate x thread count of `qtune tune`'s table (docs/tune.md)."""
    candidate: str
    threads: int
    status: str
    latency_ms: Optional[float]
    raw: Dict[str, Any] = dataclasses.field(repr=False, compare=False)

    def to_dict(self):
        return copy.deepcopy(self.raw)


@dataclasses.dataclass(frozen=True)
class TuneResult(_Result):
    """qtune.tune(): `qtune tune --json` (docs/tune.md)."""
    candidate: Optional[str] = None
    threads: Optional[int] = None
    checkpoint: Optional[str] = None
    model: Optional[str] = None
    strategy: Optional[str] = None
    table: List[TuneRow] = dataclasses.field(default_factory=list)

    @classmethod
    def from_json(cls, raw):
        return cls(raw=raw, candidate=raw.get("candidate"), threads=raw.get("threads"),
                   checkpoint=raw.get("checkpoint"), model=raw.get("model"),
                   strategy=raw.get("strategy"),
                   table=[TuneRow(candidate=row.get("candidate"), threads=row.get("threads"),
                                  status=row.get("status"), latency_ms=row.get("latency_ms"),
                                  raw=row)
                          for row in raw.get("table", [])])


@dataclasses.dataclass(frozen=True)
class AutotuneResult(_Result):
    """qtune.autotune(): the report (docs/formats/autotune-report.md), equal to
    work_dir/report.json."""
    model: Optional[str] = None
    output: Optional[str] = None
    mode: Optional[str] = None
    speedup_vs_fp32: Optional[float] = None
    speedup_vs_rule: Optional[float] = None
    latency_ms: Optional[float] = None
    measured: int = 0
    failed: int = 0
    elapsed_s: Optional[float] = None

    @classmethod
    def from_json(cls, raw):
        final = raw.get("final") or {}
        counts = raw.get("counts") or {}
        return cls(raw=raw, model=raw.get("model"), output=raw.get("output"),
                   mode=raw.get("mode"), speedup_vs_fp32=final.get("speedup_vs_fp32"),
                   speedup_vs_rule=final.get("speedup_vs_rule"),
                   latency_ms=final.get("latency_ms"), measured=counts.get("measured", 0),
                   failed=counts.get("failed", 0), elapsed_s=raw.get("elapsed_s"))
