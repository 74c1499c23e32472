# Lit configuration for the IPU compiler's FileCheck tests.
import os
import shutil
import sys

import lit.formats

config.name = "IPU"
config.test_format = lit.formats.ShTest(not lit_config.isWindows)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ipu_obj_root, "test")

# Our tools first, then LLVM's FileCheck, not, count and split-file.
path = os.pathsep.join([config.ipu_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
# Keep structured logs off test output unless a test asks for them.
config.environment["IPU_LOG"] = "warn"
config.substitutions.append(("%ipu_src_root", config.ipu_src_root))
config.substitutions.append(("%ipu_tools_dir", config.ipu_tools_dir))
# The interpreter running lit, for test drivers written in Python.
config.substitutions.append(("%python", sys.executable))

# Packages as Cap'n Proto text, for tests that tamper with them: the tool
# CMake found, the schema's imports and the package schema.
schema = os.path.join(config.ipu_src_root, "lib", "Package", "Package.capnp")
capnp = "%s %%s -I%s %s Package" % (config.capnp_executable,
                                    config.capnp_include_dir, schema)
config.substitutions.append(("%capnp-decode", capnp % "decode"))
config.substitutions.append(("%capnp-encode", capnp % "encode"))

# The Python bridge (python/ipu_export) in the repository's .venv, made by
# scripts/setup.sh from python/requirements.txt; without it the tests that
# export live from PyTorch are UNSUPPORTED.
venv_python = os.path.join(config.ipu_src_root, ".venv", "bin", "python")
stamp = os.path.join(config.ipu_src_root, ".venv", "ipu-requirements.txt")
requirements = os.path.join(config.ipu_src_root, "python", "requirements.txt")
if (os.path.exists(venv_python) and os.path.exists(stamp) and
        open(stamp).read() == open(requirements).read()):
    config.available_features.add("torch-mlir")
    config.substitutions.append(
        ("%ipu_export", "env PYTHONPATH=%s %s -m ipu_export" %
         (os.path.join(config.ipu_src_root, "python"), venv_python)))
    # The same Python with the bridge importable, for checks of its parts.
    config.substitutions.append(
        ("%ipu_python", "env PYTHONPATH=%s %s" %
         (os.path.join(config.ipu_src_root, "python"), venv_python)))
else:
    lit_config.note("no .venv with python/requirements.txt: live exports are skipped")

# Headless Chromium renders the --profile report (profile-chromium.test);
# without it that test is UNSUPPORTED.
if shutil.which("chromium"):
    config.available_features.add("chromium")
else:
    lit_config.note("chromium not on PATH: profile-chromium.test is skipped")

# Compiled kernels are cached in the build tree, never in the user's home.
config.environment["IPU_KERNEL_CACHE"] = os.path.join(config.ipu_obj_root,
                                                      "kernel-cache")
# A C compiler for tests that build hostile shared objects.
config.substitutions.append(("%clang", os.path.join(config.llvm_tools_dir, "clang")))
