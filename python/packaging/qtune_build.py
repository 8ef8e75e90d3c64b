"""The PEP 517 build backend of pyproject.toml: setuptools.build_meta (running setup.py),
after checking that the interpreter building the package has what the build needs
(setuptools; wheel where setuptools lacks bdist_wheel, i.e. before 70.1; numpy, whose
headers CMake's FindPython wants). A missing one fails in one line that names it and the
interpreter, instead of "invalid command 'bdist_wheel'" or a CMake error."""
import importlib.util
import sys


def missing_build_modules():
    """The modules this interpreter lacks for building qtune, in install order."""
    missing = []
    has_wheel = importlib.util.find_spec("wheel") is not None
    if importlib.util.find_spec("setuptools") is None:
        missing.append("setuptools")
        if not has_wheel:
            missing.append("wheel")
    elif not has_wheel and not _setuptools_has_bdist_wheel():
        missing.append("wheel")
    if importlib.util.find_spec("numpy") is None:
        missing.append("numpy")
    return missing


def _setuptools_has_bdist_wheel():
    return importlib.util.find_spec("setuptools.command.bdist_wheel") is not None


def _check(needed=None):
    missing = [m for m in missing_build_modules() if needed is None or m in needed]
    if missing:
        raise SystemExit(
            "qtune: %s lacks %s, needed to build qtune; on Debian run scripts/install_deps.sh "
            "and use /usr/bin/python3 or a venv made with --system-site-packages (apt-get "
            "install %s), else pip install %s" %
            (sys.executable, ", ".join(missing), " ".join("python3-" + m for m in missing),
             " ".join(missing)))


def _backend():
    _check(needed=("setuptools",))
    from setuptools import build_meta
    return build_meta


# Requirements are asked before they are installed (isolated builds): setuptools only.
def get_requires_for_build_wheel(config_settings=None):
    return _backend().get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    return _backend().get_requires_for_build_sdist(config_settings)


def get_requires_for_build_editable(config_settings=None):
    return _backend().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _check()
    return _backend().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _check()
    return _backend().build_wheel(wheel_directory, config_settings, metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    _check()
    return _backend().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _check()
    return _backend().build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _backend().build_sdist(sdist_directory, config_settings)
