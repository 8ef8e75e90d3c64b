"""qtune.InferenceSession: onnxruntime's InferenceSession API over qtune's engine
(docs/coming-from-onnxruntime.md). A script written for onnxruntime runs with
`import qtune as ort` for what qtune supports: CPU only, the options below.
"""
import enum
import os

from . import _qtune

_CPU = "CPUExecutionProvider"


def get_available_providers():
    """The execution providers qtune has: the CPU one only."""
    return [_CPU]


def get_all_providers():
    return [_CPU]


def get_device():
    return "CPU"


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels, same values. qtune has one pipeline: ORT_DISABLE_ALL turns off
    its passes and fusions, every other level turns them all on."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for onnxruntime scripts; qtune runs the graph's steps in order either way."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """onnxruntime.SessionOptions for what applies to qtune.

    intra_op_num_threads: threads the engine uses; 0 (onnxruntime's default, "let the
    runtime choose") means qtune's default, 1. graph_optimization_level: see
    GraphOptimizationLevel. The other attributes are accepted and have no effect on qtune
    (inter_op_num_threads, execution_mode, log_severity_level, ...); an attribute
    onnxruntime does not have is an AttributeError, so a typo does not pass unnoticed.
    """
    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level",
                 "execution_mode", "execution_order", "log_severity_level",
                 "log_verbosity_level", "logid", "enable_profiling", "profile_file_prefix",
                 "enable_mem_pattern", "enable_mem_reuse", "enable_cpu_mem_arena",
                 "use_deterministic_compute", "optimized_model_filepath", "_config")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = 0
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.enable_cpu_mem_arena = True
        self.use_deterministic_compute = False
        self.optimized_model_filepath = ""
        self._config = {}

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        return self._config[key]

    def _threads(self):
        threads = int(self.intra_op_num_threads)
        if threads < 0:
            raise _qtune.InvalidArgument(
                "SessionOptions.intra_op_num_threads must be >= 0, got %d" % threads)
        return threads or 1

    def _optimize(self):
        return int(self.graph_optimization_level) != GraphOptimizationLevel.ORT_DISABLE_ALL


class RunOptions:
    """Accepted by run() for onnxruntime scripts; nothing in it changes a qtune run."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False


class NodeArg:
    """A graph input or output as onnxruntime describes it: .name, .type
    ("tensor(float)", "seq(tensor(int64))", ...) and .shape (a list: an int per known
    dimension, the symbol's name for a symbolic one, None for an unknown one)."""
    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


class ModelMetadata:
    """get_modelmeta(): the ModelProto's producer_name, graph_name, domain, description
    (doc_string), graph_description, version (model_version) and custom_metadata_map
    (metadata_props)."""

    def __init__(self, fields):
        self.producer_name = fields["producer_name"]
        self.graph_name = fields["graph_name"]
        self.domain = fields["domain"]
        self.description = fields["description"]
        self.graph_description = fields["graph_description"]
        self.version = fields["version"]
        self.custom_metadata_map = dict(fields["custom_metadata_map"])


def _provider_names(providers, provider_options):
    """The names in onnxruntime's providers= (names or (name, options) pairs); anything but
    the CPU provider is refused."""
    if providers is None:
        return [_CPU]
    if isinstance(providers, str):
        providers = [providers]
    names = []
    for entry in providers:
        name = entry[0] if isinstance(entry, (tuple, list)) else entry
        if name != _CPU:
            raise _qtune.InvalidArgument(
                "qtune runs on the CPU only: provider %r is not available; use "
                "providers=['CPUExecutionProvider'] or leave providers out" % (name,))
        names.append(name)
    if provider_options is not None and len(provider_options) != len(names):
        raise _qtune.InvalidArgument(
            "provider_options has %d entries for %d providers" % (len(provider_options), len(names)))
    return names or [_CPU]


class InferenceSession:
    """onnxruntime.InferenceSession(path_or_bytes, sess_options=None, providers=None) on
    qtune's engine. run() returns a list of arrays in the requested order; a sequence
    output is a list of arrays, an empty optional None. Errors are qtune.Error subclasses.
    The plain qtune.Session (dict in, dict out) is `self.session`."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 **kwargs):
        self._providers = _provider_names(providers, provider_options)
        self._options = sess_options if sess_options is not None else SessionOptions()
        if getattr(self._options, "optimized_model_filepath", ""):
            raise _qtune.Unimplemented(
                "SessionOptions.optimized_model_filepath: qtune does not write its optimized "
                "model; leave it empty (qtune quantize/tune write models)")
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            model = bytes(path_or_bytes)
            self._model_path = None
        else:
            model = os.fspath(path_or_bytes)
            self._model_path = model
        self.session = _qtune.Session(model, threads=self._options._threads(),
                                      optimize=self._options._optimize())
        self._inputs = [NodeArg(*info) for info in self.session._value_info(False)]
        self._outputs = [NodeArg(*info) for info in self.session._value_info(True)]
        self._output_names = [arg.name for arg in self._outputs]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_modelmeta(self):
        return ModelMetadata(self.session._model_meta())

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {name: {} for name in self._providers}

    def set_providers(self, providers=None, provider_options=None):
        self._providers = _provider_names(providers, provider_options)

    def get_session_options(self):
        return self._options

    def run(self, output_names, input_feed, run_options=None):
        """Runs on input_feed ({input name: array}); returns the outputs named in
        output_names (None or []: all, in graph order) as a list in that order."""
        if output_names:
            unknown = [name for name in output_names if name not in self._output_names]
            if unknown:
                raise _qtune.InvalidArgument(
                    "run(): the model has no output %s; its outputs are %s" %
                    (", ".join(repr(name) for name in unknown),
                     ", ".join(repr(name) for name in self._output_names)))
        results = self.session.run(dict(input_feed))
        names = output_names or self._output_names
        return [results[name] for name in names]
