"""Calibration data as quantize(), tune(), autotune() and eval() take it (`calib=`):

- a path (.npy, .npz, an image folder), a pathlib.Path, or a list of them;
- an ndarray (the samples of a one-input model, along axis 0);
- a dict {input name: array};
- an onnxruntime-style reader (an object with get_next() returning such a dict, then None);
- any iterable of such dicts (a generator, a DataLoader yielding dicts of arrays).

In-memory data is streamed: each batch is appended to one .npy file per input in a
temporary folder and dropped before the next is read, so only about one batch is in
memory at a time, however many there are. The files are what the C++ calibration reads
(and what tune/autotune hand to their measuring processes); they are removed when the
call ends. The same samples give the same scales as one array in a file.
"""
import contextlib
import os
import shutil
import tempfile

import numpy as np

from . import _qtune

_ACCEPTED = ("calib must be a data path (.npy, .npz, image folder), a list of paths, a numpy "
             "array, a dict {input name: array}, a reader with get_next() or an iterable of "
             "such dicts (batches); ")


class CalibrationDataReader:
    """onnxruntime.quantization.CalibrationDataReader's shape: subclass it and define
    get_next() returning {input name: array} per batch, then None. Any object with such a
    get_next() works; this base class only adds iteration."""

    def get_next(self):
        raise NotImplementedError

    def __iter__(self):
        return self

    def __next__(self):
        batch = self.get_next()
        if batch is None:
            raise StopIteration
        return batch


def _bad(why):
    raise _qtune.InvalidArgument(_ACCEPTED + why)


def _is_path(value):
    return isinstance(value, (str, bytes)) or hasattr(value, "__fspath__")


class _NpyAppender:
    """One .npy file grown batch by batch along axis 0. The header is written with room for
    any sample count and rewritten, same length, when the file is closed."""

    _COUNT_PLACEHOLDER = 10 ** 17

    def __init__(self, path, label):
        self.path = path
        self.label = label
        self.rows = 0
        self._file = None
        self._dtype = None
        self._tail = None
        self._header_len = 0

    def _header(self, rows):
        shape = (rows,) + self._tail
        return "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (
            np.lib.format.dtype_to_descr(self._dtype), shape)

    def append(self, array, batch_index):
        array = np.asarray(array)
        if array.ndim == 0:
            _bad("input %r of batch %d is a scalar; give samples along axis 0" %
                 (self.label, batch_index))
        if array.dtype.hasobject or array.dtype.kind not in "fiub":
            _bad("input %r of batch %d has dtype %s; give numeric arrays" %
                 (self.label, batch_index, array.dtype))
        if self._file is None:
            self._dtype = array.dtype
            self._tail = tuple(array.shape[1:])
            header = self._header(self._COUNT_PLACEHOLDER)
            # magic (6) + version (2) + length (2) + header + '\n', padded to 64 bytes
            self._header_len = -(-(10 + len(header) + 1) // 64) * 64 - 10
            self._file = open(self.path, "wb")
            self._write_header(self._COUNT_PLACEHOLDER)
        elif array.dtype != self._dtype or tuple(array.shape[1:]) != self._tail:
            _bad("input %r of batch %d is %s %s, earlier batches were %s %s" %
                 (self.label, batch_index, array.dtype, list(array.shape), self._dtype,
                  ["N"] + list(self._tail)))
        self._file.write(np.ascontiguousarray(array).data)
        self.rows += int(array.shape[0])

    def _write_header(self, rows):
        header = self._header(rows)
        padded = header + " " * (self._header_len - len(header) - 1) + "\n"
        self._file.seek(0)
        self._file.write(b"\x93NUMPY\x01\x00" + self._header_len.to_bytes(2, "little") +
                         padded.encode("latin1"))
        self._file.seek(0, os.SEEK_END)

    def close(self):
        if self._file is not None:
            self._write_header(self.rows)
            self._file.close()
            self._file = None


def _batches(calib):
    """The dict batches of a reader or an iterable; None when calib is a list of paths."""
    if hasattr(calib, "get_next") and callable(calib.get_next):
        return iter(calib.get_next, None)
    if not hasattr(calib, "__iter__"):
        _bad("got %s" % type(calib).__name__)
    return iter(calib)


def _stream(batches, folder, max_samples, pending=None):
    """Appends `pending` (a list of batches read already, emptied) and then the dict
    batches to one file per input; returns the specs. Holds no batch but the current one
    (itertools.chain would keep one more alive)."""
    writers = {}
    index = 0
    try:
        while True:
            batch = pending.pop(0) if pending else next(batches, None)
            if batch is None:
                break
            if _is_path(batch):
                _bad("the iterable mixes paths and dicts")
            if not isinstance(batch, dict):
                _bad("batch %d is a %s, not a dict {input name: array}" %
                     (index, type(batch).__name__))
            if not batch:
                _bad("batch %d is an empty dict" % index)
            for name in batch:
                if not isinstance(name, str):
                    _bad("a dict key is not an input name (str): %r" % (name,))
            if writers and set(batch) != set(writers):
                _bad("batch %d has inputs %s, earlier batches had %s" %
                     (index, sorted(batch), sorted(writers)))
            for name, array in batch.items():
                if name not in writers:
                    writers[name] = _NpyAppender(
                        os.path.join(folder, "%d.npy" % len(writers)), name)
                writers[name].append(array, index)
            del batch
            index += 1
            if max_samples > 0 and min(w.rows for w in writers.values()) >= max_samples:
                break  # enough samples: the rest of the reader is never read
    finally:
        for writer in writers.values():
            writer.close()
    if not writers:
        _bad("the iterable is empty")
    return ["%s=%s" % (name, writer.path) for name, writer in writers.items()]


@contextlib.contextmanager
def calibration_specs(calib, max_samples=0):
    """Yields the calibration data specs (calibration_data.h) for `calib`; in-memory data
    is streamed into a temporary folder that is removed when the block ends."""
    if _is_path(calib):
        yield [os.fspath(calib)]
        return
    folder = tempfile.mkdtemp(prefix="qtune_calib_")
    try:
        if isinstance(calib, np.ndarray):
            writer = _NpyAppender(os.path.join(folder, "0.npy"), "array")
            try:
                writer.append(calib, 0)
            finally:
                writer.close()
            yield [writer.path]
        elif isinstance(calib, dict):
            if not calib:
                _bad("the dict is empty")
            yield _stream(iter(()), folder, 0, [calib])
        else:
            batches = _batches(calib)
            first = next(batches, None)
            if first is None:
                _bad("the iterable is empty")
            if _is_path(first):
                paths = [os.fspath(first)]
                for item in batches:
                    if not _is_path(item):
                        _bad("the iterable mixes paths and dicts")
                    paths.append(os.fspath(item))
                yield paths
            else:
                pending = [first]
                del first  # _stream takes it out of the list
                yield _stream(batches, folder, max_samples, pending)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
