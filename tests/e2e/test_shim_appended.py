"""A shim forwarder keeps the old function's behaviour for the parameter its successor
appends (issue 16): the rule in src/abi/data/torch_appended.txt, not a guessed zero.

g++ builds stand-ins of torch's libc10.so: the "2.9" one with c10::MessageLogger's
3-argument constructor (torch 2.9.1 exports `_ZN3c1013MessageLoggerC1EPKcii`), the
"2.10" one with only the 4-argument one (`...C1EPKciib`, as 2.10.0 exports), whose
destructor, for a FATAL severity, aborts when exit_on_fatal is true and throws when it
is false (torch's DealWithFatal). An extension built against "2.9" logs a fatal
message through the old constructor (and one at ERROR severity). `wheelfix shim`
against the "2.10" torch forwards the old constructor; called through the shim the
fatal log must abort (SIGABRT, the stand-in's abort line on stderr), as the old
torch did — with the bool passed as false it would throw, and the extension's catch
would return normally. The ERROR log returns normally either way. A near miss whose
appended parameter no rule names is a stub, never a forwarder with a guessed value.
"""
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import wfx  # noqa: E402
from test_shim import make_wheel, torch_tree  # noqa: E402

OLD_CTOR = "_ZN3c1013MessageLoggerC1EPKcii"
NEW_CTOR = "_ZN3c1013MessageLoggerC1EPKciib"
OLD_GROW = "_ZN3c1016wheelfix_fixtureEi"    # c10::wheelfix_fixture(int)
NEW_GROW = "_ZN3c1016wheelfix_fixtureEib"   # c10::wheelfix_fixture(int, bool): no rule names it

OLD_TORCH = r"""
namespace c10 {
class MessageLogger {
 public:
  MessageLogger(const char* file, int line, int severity);
  ~MessageLogger() noexcept(false);
 private:
  int severity_;
};
MessageLogger::MessageLogger(const char*, int, int severity) : severity_(severity) {}
MessageLogger::~MessageLogger() noexcept(false) {}
int wheelfix_fixture(int v) { return v; }
}
"""

NEW_TORCH = r"""
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
namespace c10 {
class MessageLogger {
 public:
  MessageLogger(const char* file, int line, int severity, bool exit_on_fatal = true);
  ~MessageLogger() noexcept(false);
 private:
  const char* file_;
  int line_;
  int severity_;
  bool exit_on_fatal_;
};
MessageLogger::MessageLogger(const char* file, int line, int severity, bool exit_on_fatal)
    : file_(file), line_(line), severity_(severity), exit_on_fatal_(exit_on_fatal) {}
MessageLogger::~MessageLogger() noexcept(false) {
  if (severity_ != 3) return;
  if (exit_on_fatal_) {
    std::fprintf(stderr, "stand-in 2.10: fatal log at %s:%d, abort\n", file_, line_);
    std::fflush(stderr);
    std::abort();
  }
  throw std::runtime_error("stand-in 2.10: fatal log, thrown");
}
int wheelfix_fixture(int v, bool flag) { return v + (flag ? 100 : 1); }
}
"""

# The extensions' view of torch 2.9's MessageLogger: the 3-argument constructor.
OLD_LOGGER = r"""
class MessageLogger {
 public:
  MessageLogger(const char* file, int line, int severity);
  ~MessageLogger() noexcept(false);
 private:
  char storage_[64];
};
"""

EXTENSION = r"""
#include <exception>
namespace c10 {
""" + OLD_LOGGER + r"""
int wheelfix_fixture(int v);
}
// 0 when the log returned, 1 when it threw; a fatal log with exit_on_fatal aborts.
extern "C" int ext_log(int severity) {
  try {
    c10::MessageLogger logger("ext.cc", 7, severity);
  } catch (const std::exception&) {
    return 1;
  }
  return 0;
}
extern "C" int ext_grow(int v) { return c10::wheelfix_fixture(v); }
"""

CALL = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
print(getattr(lib, sys.argv[2])(int(sys.argv[3])), flush=True)
"""


def gxx(source, output, *flags, cwd):
    src = Path(cwd) / (Path(output).stem + ".cc")
    src.write_text(source)
    proc = subprocess.run(["g++", "-O1", "-fPIC", "-shared", str(src), "-o", str(output), *map(str, flags)],
                          capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise AssertionError(f"g++ failed:\n{proc.stderr}")
    return Path(output)


class AppendedParameterBehaviour(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("g++"):
            raise unittest.SkipTest("g++ is needed for the stand-in torch libraries")
        cls.tmp_context = tempfile.TemporaryDirectory()
        tmp = cls.tmp = Path(cls.tmp_context.name)
        (tmp / "old").mkdir()
        (tmp / "new").mkdir()
        old = gxx(OLD_TORCH, tmp / "old" / "libc10.so", "-Wl,-soname,libc10.so", cwd=tmp / "old")
        new = gxx(NEW_TORCH, tmp / "new" / "libc10.so", "-Wl,-soname,libc10.so", cwd=tmp / "new")
        ext = gxx(EXTENSION, tmp / "ext.so", f"-L{old.parent}", "-lc10", "-Wl,-rpath,$ORIGIN/../torch/lib",
                  "-Wl,--enable-new-dtags", cwd=tmp)
        cls.new_torch = torch_tree(tmp / "torch-2.10", "2.10.0", {"libc10.so": new})
        wheel = make_wheel(tmp, "logpkg", "cp311-cp311-linux_x86_64", {"logpkg/ext.so": ext.read_bytes()})
        proc = wfx.run("shim", wheel, "--torch", cls.new_torch, "-o", tmp / "out", "--json")
        cls.report = json.loads(proc.stdout)
        cls.status = proc.returncode
        cls.stderr = proc.stderr
        cls.site = tmp / "site"
        with zipfile.ZipFile(tmp / "out" / wheel.name) as zf:
            zf.extractall(cls.site)
        for path in cls.site.rglob("*.so"):
            path.chmod(0o755)
        shutil.copytree(cls.new_torch / "lib", cls.site / "torch" / "lib")

    @classmethod
    def tearDownClass(cls):
        cls.tmp_context.cleanup()

    def call(self, function, argument):
        return subprocess.run([sys.executable, "-c", CALL, str(self.site / "logpkg" / "ext.so"), function, str(argument)],
                              capture_output=True, text=True)

    def test_decisions(self):
        symbols = {s["name"]: s for s in self.report["symbols"]}
        ctor = symbols[OLD_CTOR]
        self.assertEqual((ctor["action"], ctor["target"], ctor["appended_values"]), ("forward", NEW_CTOR, [1]), ctor)
        self.assertIn("exit_on_fatal", ctor["reason"])
        grow = symbols[OLD_GROW]
        self.assertEqual(grow["action"], "stub", grow)
        self.assertIn("no rule", grow["reason"])

    def test_fatal_log_through_the_forwarder_aborts_as_the_old_torch_did(self):
        proc = self.call("ext_log", 3)
        self.assertEqual(proc.returncode, -signal.SIGABRT, (proc.stdout, proc.stderr))
        self.assertIn("stand-in 2.10: fatal log at ext.cc:7, abort", proc.stderr)
        self.assertEqual(proc.stdout, "")  # neither returned nor threw

    def test_error_log_through_the_forwarder_returns(self):
        proc = self.call("ext_log", 2)
        self.assertEqual((proc.returncode, proc.stdout.strip()), (0, "0"), proc.stderr)

    def test_unruled_near_miss_is_a_loud_stub(self):
        proc = self.call("ext_grow", 41)
        self.assertEqual(proc.returncode, -signal.SIGABRT, (proc.stdout, proc.stderr))
        self.assertIn("c10::wheelfix_fixture(int) is not provided by torch 2.10.0", proc.stderr)


# A class derived from MessageLogger constructs its base through the base-object
# constructor (C2), a plain use through the complete-object one (C1): both demangle to
# the same text, and each is forwarded.
TWO_CONSTRUCTORS = r"""
namespace c10 {
""" + OLD_LOGGER + r"""
}
struct Tagged : c10::MessageLogger {
  Tagged() : c10::MessageLogger("tagged.cc", 1, 2) {}
};
extern "C" int ext_both() {
  { c10::MessageLogger plain("ext.cc", 7, 2); }
  { Tagged tagged; }
  return 0;
}
"""


class OneLinePerFunction(unittest.TestCase):
    """Issue 34: the forwarders of MessageLogger's complete and base constructors are one
    line in the text (the demangled names are the same), with the count; JSON keeps both."""

    def test_constructor_variants_are_named_once(self):
        if not shutil.which("g++"):
            self.skipTest("g++ is needed for the stand-in torch libraries")
        with tempfile.TemporaryDirectory() as name:
            tmp = Path(name)
            (tmp / "old").mkdir()
            (tmp / "new").mkdir()
            old = gxx(OLD_TORCH, tmp / "old" / "libc10.so", "-Wl,-soname,libc10.so", cwd=tmp / "old")
            new = gxx(NEW_TORCH, tmp / "new" / "libc10.so", "-Wl,-soname,libc10.so", cwd=tmp / "new")
            ext = gxx(TWO_CONSTRUCTORS, tmp / "ext.so", f"-L{old.parent}", "-lc10", cwd=tmp)
            imports = subprocess.run(["nm", "-D", "--undefined-only", str(ext)], capture_output=True, text=True).stdout
            self.assertIn(OLD_CTOR, imports)
            self.assertIn(OLD_CTOR.replace("C1E", "C2E"), imports)
            torch = torch_tree(tmp / "torch-2.10", "2.10.0", {"libc10.so": new})
            wheel = make_wheel(tmp, "twopkg", "cp311-cp311-linux_x86_64", {"twopkg/ext.so": ext.read_bytes()})
            text = wfx.run("shim", wheel, "--torch", torch, "-o", tmp / "out").stdout
            lines = [line for line in text.splitlines() if "c10::MessageLogger::MessageLogger(char const*, int, int)" in line]
            self.assertEqual(len(lines), 1, text)
            self.assertIn("(2 symbols of that name: constructor or destructor variants)", lines[0])
            doc = wfx.run_json("shim", wheel, "--torch", torch, "-o", tmp / "json", check_status=None)
            forwarded = [s["name"] for s in doc["symbols"] if s["action"] == "forward"]
            self.assertEqual(sorted(forwarded), sorted([OLD_CTOR, OLD_CTOR.replace("C1E", "C2E")]))


if __name__ == "__main__":
    unittest.main()
