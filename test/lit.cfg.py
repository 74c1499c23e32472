# Lit configuration for the IPU compiler's FileCheck tests.
import os

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
