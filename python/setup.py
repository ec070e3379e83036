"""Records, in the installed package, the checkout it was installed from, so that the package
finds that checkout's build tree (build/capi/libfourdgs-c.so.0) without an environment variable.
Everything else is in pyproject.toml."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def run(self):
        super().run()
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        target = os.path.join(self.build_lib, "fourdgs", "_origin.py")
        with open(target, "w") as f:
            f.write('"""Written at install time: the fourdgs checkout this package came from."""\n')
            f.write(f"SOURCE_ROOT = {root!r}\n")


setup(cmdclass={"build_py": BuildPy})
