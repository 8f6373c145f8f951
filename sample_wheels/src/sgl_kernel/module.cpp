// The Python side of common_ops: a limited-API (abi3) module, as sgl-kernel ships it.
// The real one registers torch operators; this one only tells where it was built for.
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

namespace {

PyObject* build_variant(PyObject*, PyObject*) { return PyUnicode_FromString(SGL_KERNEL_VARIANT); }

PyMethodDef methods[] = {
    {"build_variant", build_variant, METH_NOARGS, "The GPU family this build targets."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "common_ops", "sgl-kernel stand-in", -1, methods,
                      nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_common_ops() { return PyModule_Create(&module); }
